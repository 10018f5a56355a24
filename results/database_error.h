// The one exception type of the tuning database (results/): every failure to open, read or write it, and
// every record it refuses, is reported as a DatabaseError whose message names the database file.
#pragma once

#include <stdexcept>
#include <string>

namespace ingot {

class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "ingot database '<path>': <problem>", the form of every DatabaseError message.
[[noreturn]] void throw_database_error(const std::string& path, const std::string& problem);

}  // namespace ingot
