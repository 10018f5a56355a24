// An error in a user's input file, located by file, line, column and key: what the YAML readers of run
// configs and target descriptions throw. what() is "<file>:<line>:<column>: <key path>: <problem>".
#pragma once

#include <stdexcept>
#include <string>

namespace ingot {

// Lines and columns count from 1; errors about the file as a whole (unreadable, bad syntax) leave the key path
// empty, and an unreadable file has line and column 0.
class LocatedError : public std::runtime_error {
 public:
  LocatedError(std::string file, int line, int column, std::string key_path, std::string problem);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  int line_, column_;
  std::string key_path_, problem_;
};

}  // namespace ingot
