// Export: the files compile alone with the documented plain command, and the program they build reads the inputs,
// checks every output against the reference, and fails naming the output or the file when something is wrong;
// the small paper models' global programs export as one kernel each and pass their own check.
#include "compile/export_cpp.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "ir/program.h"
#include "lower/lower.h"
#include "ops/gather.h"
#include "ops/linear.h"
#include "space/hand_schedules.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/bf16_products.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

// The inputs the tuner measures with (random_inputs of the seed and ranges) and the interpreter's outputs on them.
ExportedProgram export_with_reference(const Program& p, const LoopFunction& f, uint64_t seed,
                                      const InputRanges& ranges = {}) {
  TensorMap inputs = random_inputs(p, seed, ranges);
  TensorMap reference = interpret(p, inputs);
  return export_cpp(f, std::move(inputs), std::move(reference));
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ingot_export_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes the export into dir and builds it with its own build command; the compiler's messages go to build.log.
bool write_and_build(const ExportedProgram& e, const fs::path& dir) {
  write_exported_program(e, dir.string());
  std::string command = "cd '" + dir.string() + "' && " + e.build_command + " > build.log 2>&1";
  return std::system(command.c_str()) == 0;
}

struct ProgramRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

ProgramRun run_exported(const fs::path& dir, const std::string& name, const std::string& arguments = "") {
  std::string command = "cd '" + dir.string() + "' && ./" + name + " " + arguments + " > run.log 2>&1";
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir / "run.log")};
}

// A copy of the data folders, to break without touching the export's own.
fs::path copy_data(const fs::path& dir, const std::string& name) {
  fs::path data = dir / name;
  fs::remove_all(data);
  fs::create_directories(data);
  for (const char* folder : {"inputs", "reference"}) fs::copy(dir / folder, data / folder, fs::copy_options::recursive);
  return data;
}

template <class T>
void change_element(const fs::path& file, int64_t index, T delta) {
  std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
  T value;
  f.seekg(std::streamoff(index * sizeof(T)));
  f.read(reinterpret_cast<char*>(&value), sizeof value);
  value += delta;
  f.seekp(std::streamoff(index * sizeof(T)));
  f.write(reinterpret_cast<const char*>(&value), sizeof value);
  ASSERT_TRUE(f) << file;
}

// One export of two_gemm built once for the tests that run it against broken data.
class ExportCppTwoGemm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Program p = two_gemm(8, 128, 16, 64);
    exported_ = new ExportedProgram(export_with_reference(p, lower(p, hand_schedule(p)), 5));
    dir_ = new fs::path(fresh_dir("two_gemm"));
    built_ = write_and_build(*exported_, *dir_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete exported_;
  }
  void SetUp() override { ASSERT_TRUE(built_) << read_text(*dir_ / "build.log"); }

  static ExportedProgram* exported_;
  static fs::path* dir_;
  static bool built_;
};
ExportedProgram* ExportCppTwoGemm::exported_ = nullptr;
fs::path* ExportCppTwoGemm::dir_ = nullptr;
bool ExportCppTwoGemm::built_ = false;

TEST_F(ExportCppTwoGemm, WritesTheSourcesReadmeAndOneFilePerTensor) {
  EXPECT_EQ(exported_->name, "two_gemm");
  for (const char* file : {"two_gemm.cpp", "two_gemm.h", "two_gemm_main.cpp", "README.txt", "inputs/X.bin",
                           "inputs/W1.bin", "inputs/W2.bin", "reference/Y.bin"})
    EXPECT_TRUE(fs::is_regular_file(*dir_ / file)) << file;
  EXPECT_EQ(fs::file_size(*dir_ / "inputs/X.bin"), 8u * 16 * sizeof(float));
  EXPECT_EQ(fs::file_size(*dir_ / "reference/Y.bin"), 8u * 64 * sizeof(float));
  EXPECT_EQ(exported_->reference.size(), 1u) << "the interpreter's intermediates are not the program's outputs";
  std::string readme = read_text(*dir_ / "README.txt");
  for (const std::string& part : {exported_->build_command, std::string("./two_gemm [DATA_DIR] [--repeat N]"),
                                  std::string("reference/<tensor>.bin"), std::string("little-endian")})
    EXPECT_NE(readme.find(part), std::string::npos) << part << "\n" << readme;
}

// The build command compiles for the ISA the program was measured with: by default the tuner's own flags (with
// -mprefer-vector-width=512 on x86-64), else the named ISA's.
TEST_F(ExportCppTwoGemm, BuildsWithTheIsaFlagsTheProgramWasMeasuredWith) {
  EXPECT_NE(exported_->build_command.find("g++ -O3 " + default_isa_flags() + " -fno-math-errno"), std::string::npos)
      << exported_->build_command;
  Program p = two_gemm(8, 128, 16, 64);
  TensorMap inputs = random_inputs(p, 5), reference = interpret(p, inputs);
  ExportedProgram avx2 = export_cpp(lower(p, hand_schedule(p)), inputs, reference, "-march=x86-64-v3");
  EXPECT_NE(avx2.build_command.find("g++ -O3 -march=x86-64-v3 -fno-math-errno"), std::string::npos)
      << avx2.build_command;
}

// A file that cannot be written is named with the system's reason (a full disk says "No space left on device"),
// each file written before it is whole (renamed into place once written), and no partial file is left; a folder
// that cannot be made is named too (not in std::filesystem's own wording).
TEST_F(ExportCppTwoGemm, AFileThatCannotBeWrittenIsNamedAndNothingHalfIsLeft) {
  fs::path dir = fresh_dir("unwritable");
  fs::create_directories(dir / "inputs" / "X.bin");  // a folder where a data file goes
  write_text(dir / "two_gemm.cpp", "an earlier export\n");
  try {
    write_exported_program(*exported_, dir.string());
    ADD_FAILURE() << "the export wrote over a folder";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + (dir / "inputs" / "X.bin").string() + ": Is a directory");
  }
  EXPECT_EQ(read_text(dir / "two_gemm.cpp"), exported_->kernel_source);  // the sources come before the data
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".partial."), std::string::npos) << entry.path();
  fs::remove_all(dir);

  fs::path file = fresh_dir("a_file");
  write_text(file, "not a folder");
  try {
    write_exported_program(*exported_, (file / "out").string());
    ADD_FAILURE() << "the export made a folder inside a file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot create the folder " + (file / "out" / "inputs").string() + ": ", 0),
              0u)
        << e.what();
  }
  fs::remove(file);
}

TEST_F(ExportCppTwoGemm, MainCompilesWithoutWarnings) {
  std::string command = "cd '" + dir_->string() + "' && g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only " +
                        exported_->name + "_main.cpp > main_warnings.log 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << read_text(*dir_ / "main_warnings.log");
}

TEST_F(ExportCppTwoGemm, PassesItsOwnCheckAndWritesTheOutputs) {
  ProgramRun run = run_exported(*dir_, "two_gemm");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Y f32[8, 64]: ok"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("every output matches the reference"), std::string::npos) << run.output;

  const HostTensor& expected = exported_->reference.at("Y");
  HostTensor actual(DType::kFloat32, expected.shape());
  std::ifstream in(*dir_ / "outputs/Y.bin", std::ios::binary);
  in.read(static_cast<char*>(actual.data()), std::streamsize(actual.num_bytes()));
  ASSERT_TRUE(in) << "outputs/Y.bin is short";
  Comparison c = compare(actual, expected, 1e-4, 1e-5 * magnitude(expected));
  EXPECT_TRUE(c.ok) << c.message;
}

TEST_F(ExportCppTwoGemm, RepeatPrintsTheMedianTime) {
  ProgramRun run = run_exported(*dir_, "two_gemm", "--repeat 3");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("two_gemm: median "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(" ms of 3 runs"), std::string::npos) << run.output;
  EXPECT_NE(run_exported(*dir_, "two_gemm", "--repeat 0").exit_code, 0);
}

TEST_F(ExportCppTwoGemm, AWrongReferenceValueFailsNamingTheOutputAndElement) {
  fs::path data = copy_data(*dir_, "wrong_reference");
  change_element<float>(data / "reference/Y.bin", 37, 0.5f);
  ProgramRun run = run_exported(*dir_, "two_gemm", data.string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("Y f32[8, 64]: MISMATCH in 1 of 512 elements; worst, element 37: got "), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("1 of 1 outputs differ from the reference"), std::string::npos) << run.output;
}

TEST_F(ExportCppTwoGemm, AChangedInputFailsTheCheck) {
  fs::path data = copy_data(*dir_, "changed_input");
  change_element<float>(data / "inputs/X.bin", 0, 4.0f);
  ProgramRun run = run_exported(*dir_, "two_gemm", data.string());
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("Y f32[8, 64]: MISMATCH"), std::string::npos) << run.output;
}

TEST_F(ExportCppTwoGemm, AMissingOrShortFileIsNamedAndNothingRuns) {
  fs::path data = copy_data(*dir_, "broken_files");
  fs::remove(data / "inputs/W1.bin");
  fs::resize_file(data / "reference/Y.bin", 100);
  ProgramRun run = run_exported(*dir_, "two_gemm", data.string());
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find((data / "inputs/W1.bin").string() + ": No such file or directory (input W1 f32[16, 128]"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find((data / "reference/Y.bin").string() + ": 100 bytes, expected 2048"), std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find(": ok"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(data / "outputs"));
}

TEST_F(ExportCppTwoGemm, AnUnknownArgumentIsRefused) {
  ProgramRun run = run_exported(*dir_, "two_gemm", "--repaet 3");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("usage: ./two_gemm [DATA_DIR] [--repeat N]"), std::string::npos) << run.output;
}

// An embedding lookup and integer arithmetic: i64 and i32 tensors are read, written and compared like floats.
TEST(ExportCpp, IntegerTensorsAreReadWrittenAndCompared) {
  Tensor ids = placeholder("ids", {6}, DType::kInt64);
  Tensor table = placeholder("table", {8, 4});
  Tensor rows = embedding("rows", table, ids);
  Tensor next = compute("next", {6}, [&](const std::vector<Expr>& i) { return ids(i[0]) * int_imm(3) + int_imm(1); });
  Tensor narrow = compute("narrow", {6}, [&](const std::vector<Expr>& i) {
    return cast(DType::kInt32, ids(i[0])) - int_imm(5, DType::kInt32);
  });
  Program p({rows, next, narrow}, "integer_mix");
  fs::path dir = fresh_dir("integer_mix");
  ExportedProgram e = export_with_reference(p, lower(p, Schedule()), 3);
  ASSERT_TRUE(write_and_build(e, dir)) << read_text(dir / "build.log");
  EXPECT_EQ(fs::file_size(dir / "inputs/ids.bin"), 6u * sizeof(int64_t));
  EXPECT_EQ(fs::file_size(dir / "reference/narrow.bin"), 6u * sizeof(int32_t));

  ProgramRun run = run_exported(dir, e.name);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (const char* line : {"rows f32[6, 4]: ok", "next i64[6]: ok", "narrow i32[6]: ok"})
    EXPECT_NE(run.output.find(line), std::string::npos) << line << "\n" << run.output;

  int64_t expected = e.reference.at("next").i64()[2];
  change_element<int64_t>(dir / "reference/next.bin", 2, 1);
  run = run_exported(dir, e.name);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  std::string mismatch = "next i64[6]: MISMATCH in 1 of 6 elements; worst, element 2: got " + std::to_string(expected) +
                         ", expected " + std::to_string(expected + 1);
  EXPECT_NE(run.output.find(mismatch), std::string::npos) << mismatch << "\n" << run.output;
  EXPECT_NE(run.output.find("narrow i32[6]: ok"), std::string::npos) << run.output;
  fs::remove_all(dir);
}

// A bf16 program (precision: bf16) exports its bf16 tensors as 16-bit data files, and its main checks at bf16's
// tolerance (ir/dtype.h), which its README states.
TEST(ExportCpp, Bf16TensorsAreReadWrittenAndCheckedAtBf16sTolerance) {
  Tensor x = placeholder("x", {3, 8}), w = placeholder("w", {4, 8});
  Program f32({dense("y", x, w)}, "dense");
  Bf16Program bf16 = bf16_products(f32, {"w"});
  Tensor y = bf16.program.find("y");
  Tensor rounded =
      compute("rounded", {3, 4}, [&](const std::vector<Expr>& i) { return cast(DType::kBFloat16, y(i[0], i[1])); });
  Program p({y, rounded}, "dense_bf16");
  fs::path dir = fresh_dir("dense_bf16");
  ExportedProgram e = export_with_reference(p, lower(p, Schedule()), 4);
  EXPECT_EQ(e.rtol, kBf16Tolerance);
  EXPECT_NE(e.readme.find("<= 0.01 * max(1, max |expected|) + 0.01 * |expected|"), std::string::npos) << e.readme;
  ASSERT_TRUE(write_and_build(e, dir)) << read_text(dir / "build.log");
  EXPECT_EQ(fs::file_size(dir / "inputs/w.bin"), 4u * 8 * 2);
  EXPECT_EQ(fs::file_size(dir / "reference/rounded.bin"), 3u * 4 * 2);
  ProgramRun run = run_exported(dir, e.name);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (const char* line : {"y f32[3, 4]: ok", "rounded bf16[3, 4]: ok"})
    EXPECT_NE(run.output.find(line), std::string::npos) << line << "\n" << run.output;
  change_element<uint16_t>(dir / "reference/rounded.bin", 5, 0x0100);  // the exponent by 2: 4x the value
  run = run_exported(dir, e.name);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("rounded bf16[3, 4]: MISMATCH in 1 of 12 elements; worst, element 5"), std::string::npos)
      << run.output;
  fs::remove_all(dir);
}

// The main checks with the tolerance it is given (ingot export: the one the measurement was verified with): a
// reference off by a relative 5e-4 fails the default 1e-4 check and passes a 1e-3 one.
TEST(ExportCpp, TheCheckUsesTheGivenTolerance) {
  Program p = two_gemm(4, 32, 8, 16);
  TensorMap inputs = random_inputs(p, 3);
  TensorMap reference = interpret(p, inputs);
  HostTensor& y = reference.at("Y");
  for (int64_t i = 0; i < y.num_elements(); ++i) y.set(i, y.get(i) * (1 + 5e-4));
  for (const double rtol : {1e-4, 1e-3}) {
    ExportedProgram e = export_cpp(lower(p, Schedule()), inputs, reference, default_isa_flags(), {rtol, 0, {}});
    EXPECT_EQ(e.rtol, rtol);
    EXPECT_EQ(e.atol, 0);
    fs::path dir = fresh_dir("tolerance_" + std::to_string(rtol));
    ASSERT_TRUE(write_and_build(e, dir)) << read_text(dir / "build.log");
    ProgramRun run = run_exported(dir, e.name);
    EXPECT_EQ(run.exit_code, rtol < 5e-4 ? 1 : 0) << rtol << "\n" << run.output;
    fs::remove_all(dir);
  }
}

// An output's rounding noise widens the main's check as the runners' (kRoundingNoiseFactor times it) and the README
// states it: a reference off by 1 at one element passes with a noise of 0.3, not with 0.2 or another tensor's.
TEST(ExportCpp, TheCheckAllowsTheOutputsRoundingNoise) {
  Program p = two_gemm(4, 32, 8, 16);
  TensorMap inputs = random_inputs(p, 3);
  TensorMap reference = interpret(p, inputs);
  reference.at("Y").set(5, reference.at("Y").get(5) + 1.0);
  for (const auto& [output, noise] : std::vector<std::pair<std::string, double>>{{"Y", 0.3}, {"Y", 0.2}, {"H", 0.3}}) {
    ExportTolerance tolerance;
    tolerance.rounding_noise = {{output, noise}};
    ExportedProgram e = export_cpp(lower(p, Schedule()), inputs, reference, default_isa_flags(), tolerance);
    const bool allowed = output == "Y" && noise > 0.25;
    fs::path dir = fresh_dir("rounding_" + output + std::to_string(noise));
    ASSERT_TRUE(write_and_build(e, dir)) << read_text(dir / "build.log");
    ProgramRun run = run_exported(dir, e.name);
    EXPECT_EQ(run.exit_code, allowed ? 0 : 1) << output << " " << noise << "\n" << run.output;
    EXPECT_EQ(e.readme.find("an allowance for f32 rounding") != std::string::npos, output == "Y") << e.readme;
    fs::remove_all(dir);
  }
}

// Names from users' models: the files get safe names and the main's messages the names themselves.
TEST(ExportCpp, TensorNamesThatAreNotIdentifiersGetSafeFileNames) {
  Tensor x = placeholder("input:0/\"x\"", {4});
  Tensor y = compute("out.1", {4}, [&](const std::vector<Expr>& i) { return x(i[0]) * 2.0f; });
  Program p({y}, "odd names");
  fs::path dir = fresh_dir("odd_names");
  ExportedProgram e = export_with_reference(p, lower(p, Schedule()), 1);
  EXPECT_EQ(e.name, "odd_names");
  ASSERT_TRUE(write_and_build(e, dir)) << read_text(dir / "build.log");
  EXPECT_TRUE(fs::is_regular_file(dir / "inputs/input_0__x_.bin"));
  ProgramRun run = run_exported(dir, e.name);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("out.1 f32[4]: ok"), std::string::npos) << run.output;
  fs::remove(dir / "inputs/input_0__x_.bin");
  run = run_exported(dir, e.name);
  EXPECT_NE(run.output.find("(input input:0/\"x\" f32[4], 16 bytes)"), std::string::npos) << run.output;
  fs::remove_all(dir);
}

TEST(ExportCpp, HeaderDocumentsEveryBuffer) {
  Program p = matmul_bias_relu(4, 8, 2);
  ExportedProgram e = export_with_reference(p, lower(p, Schedule()), 1);
  for (const char* line :
       {"args[0]: input  A f32[4, 2]", "args[1]: input  B f32[2, 8]", "args[2]: input  bias f32[8]",
        "args[3]: output D f32[4, 8]", "extern \"C\" void ingot_run(void* const* args, void* workspace);"})
    EXPECT_NE(e.header.find(line), std::string::npos) << line << "\n" << e.header;
}

TEST(ExportCpp, RefusesTensorsThatDoNotFitTheBuffers) {
  Program p = matmul_bias_relu(4, 8, 2);
  LoopFunction f = lower(p, Schedule());
  TensorMap inputs = random_inputs(p, 1);
  TensorMap reference = interpret(p, inputs);
  auto refusal = [&](TensorMap in, TensorMap ref) {
    try {
      export_cpp(f, std::move(in), std::move(ref));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  TensorMap without_bias = inputs;
  without_bias.erase("bias");
  EXPECT_EQ(refusal(without_bias, reference), "export: no tensor for input 'bias'");
  TensorMap wrong_shape = inputs;
  wrong_shape.insert_or_assign("B", HostTensor(DType::kFloat32, {8, 2}));
  EXPECT_EQ(refusal(wrong_shape, reference), "export: the tensor for input 'B' is f32[8, 2], the buffer f32[2, 8]");
  EXPECT_EQ(refusal(inputs, {}), "export: no tensor for output 'D'");
}

// The six paper models' small variants under the global plan: one kernel each (one OpenMP parallel region), built
// with the export's own command and passing its own check. The fixed AVX-512 target keeps the programs the same on
// every host; the printer guards its AVX-512 forms, so they also build and run on AVX2 machines.
TEST(ExportCpp, SmallPaperModelsUnderTheGlobalPlanAreOneKernelThatPassesItsCheck) {
  struct Model {
    std::string name;
    ExportedProgram exported;
    fs::path dir;
  };
  std::vector<Model> models;
  for (const char* name : {"bert", "lstm", "resnext", "efficientnet", "swin", "mmoe"}) {
    WorkloadParams small = find_workload(name)->small;
    Program p = make_workload(name, small);
    FixedScheduleOptions options;
    options.weights = find_workload(name)->weight_names(small);  // Swin's MLP layers pass theirs packed
    Schedule schedule = make_strategy_program(p, "global", test_support::avx512_cpu(), options).schedule;
    const LoopFunction f = lower_program(p, schedule);
    if (std::string(name) == "swin") {
      EXPECT_FALSE(f.packed_inputs.empty());
    }
    models.push_back({name, export_with_reference(p, f, 1, workload_input_ranges(name, small)),
                      fresh_dir(std::string("global_") + name)});
  }
  for (const Model& m : models) {
    const std::string& source = m.exported.kernel_source;
    size_t regions = 0;
    for (size_t at = source.find("#pragma omp parallel"); at != std::string::npos;
         at = source.find("#pragma omp parallel", at + 1))
      ++regions;
    EXPECT_EQ(regions, 1u) << m.name;
  }
  // Two builds at a time: the machines that run the suite may have two cores.
  for (size_t first = 0; first < models.size(); first += 2) {
    std::vector<std::future<bool>> builds;
    for (size_t n = first; n < std::min(first + 2, models.size()); ++n)
      builds.push_back(std::async(std::launch::async, [&m = models[n]] { return write_and_build(m.exported, m.dir); }));
    for (size_t n = first; n < first + builds.size(); ++n) {
      const Model& m = models[n];
      if (!builds[n - first].get()) {
        ADD_FAILURE() << m.name << " does not build:\n" << read_text(m.dir / "build.log");
        continue;
      }
      ProgramRun run = run_exported(m.dir, m.exported.name);
      EXPECT_EQ(run.exit_code, 0) << m.name << ":\n" << run.output;
      EXPECT_NE(run.output.find("every output matches the reference"), std::string::npos) << m.name;
      fs::remove_all(m.dir);
    }
  }
}

}  // namespace
}  // namespace ingot
