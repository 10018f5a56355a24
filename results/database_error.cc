#include "results/database_error.h"

namespace ingot {

void throw_database_error(const std::string& path, const std::string& problem) {
  throw DatabaseError("ingot database '" + path + "': " + problem);
}

}  // namespace ingot
