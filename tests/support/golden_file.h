// Golden files: text a test produces (a plan, generated C++ or CUDA) compared whole with a file checked in beside
// the test, so that a change of output shows as a diff in review. INGOT_UPDATE_GOLDEN=1 rewrites the files
// instead of comparing (then review `git diff` and commit them).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ingot::test_support {

// A path inside the source tree, e.g. repo_path("tests/codegen/golden").
inline std::filesystem::path repo_path(const std::string& relative) {
  return std::filesystem::path(INGOT_SOURCE_DIR) / relative;
}

inline bool updating_golden_files() {
  const char* update = std::getenv("INGOT_UPDATE_GOLDEN");
  return update && std::string(update) == "1";
}

// Compares text with the file at path, or rewrites the file when updating_golden_files(). On a difference the
// failure names the file and the first line that differs.
inline void expect_golden(const std::filesystem::path& path, const std::string& text) {
  if (updating_golden_files()) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run the test with INGOT_UPDATE_GOLDEN=1 to write it";
  std::stringstream golden;
  golden << in.rdbuf();
  if (text == golden.str()) return;
  std::istringstream want(golden.str()), got(text);
  std::string a, b;
  int line = 1;
  while (true) {
    bool more_a = bool(std::getline(want, a)), more_b = bool(std::getline(got, b));
    if (!more_a && !more_b) break;
    if (!more_a || !more_b || a != b) {
      ADD_FAILURE() << "output differs from " << path << " at line " << line
                    << ":\n  golden: " << (more_a ? a : "(end of file)")
                    << "\n  now:    " << (more_b ? b : "(end of output)")
                    << "\nIf the change is intended, rerun with INGOT_UPDATE_GOLDEN=1 and review git diff.";
      return;
    }
    ++line;
  }
  ADD_FAILURE() << "output differs from " << path << " (line endings)";
}

}  // namespace ingot::test_support
