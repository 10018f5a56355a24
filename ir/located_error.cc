#include "ir/located_error.h"

namespace ingot {

LocatedError::LocatedError(std::string file, int line, int column, std::string key_path, std::string problem)
    : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                         (key_path.empty() ? "" : key_path + ": ") + problem),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_path_(std::move(key_path)),
      problem_(std::move(problem)) {}

}  // namespace ingot
