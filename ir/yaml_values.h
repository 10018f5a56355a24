// Checked values out of the YAML nodes of a user's file (run configs, target files): the one reader both parsers use,
// so a mistake reads the same wherever it is made. Each failure throws Error (a LocatedError) at the node's line and
// column with its key path and the problem, e.g. "t.yaml:4:20: cpu.simd_fp32_lanes: expected an integer, got a list".
// Header-only: the parsers that use it link yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "ir/scalar_text.h"

namespace ingot {

template <class Error>
class YamlValues {
 public:
  explicit YamlValues(std::string source) : source_(std::move(source)) {}

  // Marks are 0-based; a node without a position (an empty document) is reported at the file's start.
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& path, const std::string& problem) const {
    bool known = !mark.is_null() && mark.line >= 0;
    throw Error(source_, known ? mark.line + 1 : 1, known ? mark.column + 1 : 1, path, problem);
  }

  // What a node is, for messages: nothing, a list, a mapping, 'plain text' or the string "quoted text".
  static std::string describe(const YAML::Node& v) {
    switch (v.Type()) {
      case YAML::NodeType::Null: return "nothing";
      case YAML::NodeType::Sequence: return "a list";
      case YAML::NodeType::Map: return "a mapping";
      case YAML::NodeType::Scalar: return (quoted(v) ? "the string \"" : "'") + v.Scalar() + (quoted(v) ? "\"" : "'");
      default: return "an undefined value";
    }
  }

  // An unquoted integer in [min, max].
  int64_t integer(const YAML::Node& v, const std::string& path, int64_t min, int64_t max) const {
    std::string problem;
    std::optional<int64_t> value;
    if (v.Type() == YAML::NodeType::Scalar && !quoted(v)) value = integer_from_text(v.Scalar(), min, max, problem);
    if (!value) fail(v.Mark(), path, problem.empty() ? "expected an integer, got " + describe(v) : problem);
    return *value;
  }

  // An unquoted finite number >= min (> min when min_is_exclusive).
  double number(const YAML::Node& v, const std::string& path, double min, bool min_is_exclusive) const {
    if (v.Type() != YAML::NodeType::Scalar || quoted(v)) fail(v.Mark(), path, "expected a number, got " + describe(v));
    std::string problem;
    std::optional<double> value = number_from_text(v.Scalar(), min, min_is_exclusive, problem);
    if (!value) fail(v.Mark(), path, problem.empty() ? "expected a finite number, got " + describe(v) : problem);
    return *value;
  }

  // An unquoted true or false.
  bool boolean(const YAML::Node& v, const std::string& path) const {
    if (v.Type() == YAML::NodeType::Scalar && !quoted(v) && (v.Scalar() == "true" || v.Scalar() == "false"))
      return v.Scalar() == "true";
    fail(v.Mark(), path, "expected true or false, got " + describe(v));
  }

  // A scalar's text, quoted or not.
  std::string string(const YAML::Node& v, const std::string& path) const {
    if (v.Type() == YAML::NodeType::Null)
      fail(v.Mark(), path, "expected a string, got nothing (write \"\" for an empty string)");
    if (v.Type() != YAML::NodeType::Scalar) fail(v.Mark(), path, "expected a string, got " + describe(v));
    return v.Scalar();
  }

 private:
  // Plain scalars carry the non-specific tag "?", quoted ones "!": a quoted 64 is text, not a number.
  static bool quoted(const YAML::Node& v) { return v.Tag() == "!"; }

  std::string source_;
};

// The text of a user's file; throws Error (line and column 0) saying why it cannot be had: "is a directory, not a
// file", or the system's reason ("cannot open the file: No such file or directory").
template <class Error>
std::string read_user_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path, 0, 0, "", "is a directory, not a file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path, 0, 0, "",
                std::string("cannot open the file") + (errno ? ": " + std::string(std::strerror(errno)) : ""));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path, 0, 0, "", "cannot read the file");
  return text.str();
}

}  // namespace ingot
