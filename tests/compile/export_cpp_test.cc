// Export: the three files compile alone with the documented plain command, and the example program
// reproduces the interpreter's output for the same seed.
#include "compile/export_cpp.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "interp/interpreter.h"
#include "lower/lower.h"
#include "space/hand_schedules.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

TEST(ExportCpp, CompilesAloneAndReproducesTheInterpreter) {
  Program p = two_gemm(8, 128, 16, 64);
  LoopFunction f = lower(p, hand_schedule(p));
  ExportedProgram e = export_cpp(f, 5);
  EXPECT_EQ(e.name, "two_gemm");
  auto dir = std::filesystem::temp_directory_path() / ("ingot_export_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto files = write_exported_program(e, dir.string());
  ASSERT_EQ(files.size(), 4u);
  std::string cmd = "cd " + dir.string() + " && " + e.build_command + " 2> build.log && ./" + e.name + " > run.log";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  TensorMap expected = interpret(p, random_inputs(p, 5));
  const HostTensor& y = expected.at("Y");
  std::ifstream in(dir / "Y.bin", std::ios::binary);
  std::vector<float> got(size_t(y.num_elements()));
  in.read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * sizeof(float)));
  ASSERT_TRUE(in) << "Y.bin is short";
  HostTensor actual(DType::kFloat32, y.shape());
  std::copy(got.begin(), got.end(), actual.f32());
  Comparison c = compare(actual, y, 1e-4, 1e-5 * magnitude(y));
  EXPECT_TRUE(c.ok) << c.message;
  std::filesystem::remove_all(dir);
}

TEST(ExportCpp, HeaderDocumentsEveryBuffer) {
  Program p = matmul_bias_relu(4, 8, 2);
  ExportedProgram e = export_cpp(lower(p, Schedule()));
  for (const char* line :
       {"args[0]: input  A f32[4, 2]", "args[1]: input  B f32[2, 8]", "args[2]: input  bias f32[8]",
        "args[3]: output D f32[4, 8]", "extern \"C\" void ingot_run(void* const* args, void* workspace);"})
    EXPECT_NE(e.header.find(line), std::string::npos) << line << "\n" << e.header;
}

}  // namespace
}  // namespace ingot
