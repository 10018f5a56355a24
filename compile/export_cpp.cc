#include "compile/export_cpp.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"

namespace ingot {

namespace {

std::string c_identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

const char* c_type(DType t) {
  switch (t) {
    case DType::kBool: return "uint8_t";
    case DType::kInt32: return "int32_t";
    case DType::kInt64: return "int64_t";
    case DType::kFloat32: return "float";
    default: throw std::invalid_argument(std::string("export: dtype ") + dtype_name(t) + " is not supported");
  }
}

// A double literal that reads back as exactly the same value.
std::string exact_double(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  std::string text = s.str();
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string shape_text(const Buffer& b) {
  std::string s = dtype_name(b->dtype);
  s += "[";
  for (size_t d = 0; d < b->shape.size(); ++d) s += (d ? ", " : "") + std::to_string(b->shape[d]);
  return s + "]";
}

}  // namespace

ExportedProgram export_cpp(const LoopFunction& f, uint64_t input_seed, const InputRanges& input_ranges) {
  ExportedProgram e;
  e.name = c_identifier(f.name);
  e.kernel_source = "#include \"" + e.name + ".h\"\n" + cpp_source(f).source;
  e.build_command = "g++ -O3 -march=native -fopenmp " + e.name + ".cpp " + e.name + "_main.cpp -o " + e.name;
  if (std::string math = vector_math_flags(); !math.empty()) e.build_command += " " + math;

  std::ostringstream h;
  h << "// " << e.name << ": a program compiled by ingot, as standalone C++.\n"
    << "// Build: " << e.build_command << "\n//\n"
    << "// Call ingot_run(args, workspace) with args = one pointer per buffer, in this order, each to dense\n"
    << "// row-major elements, and workspace = ingot_workspace_bytes() bytes aligned to 64 (may be null when 0):\n";
  int n = 0;
  for (const Buffer& b : f.inputs) h << "//   args[" << n++ << "]: input  " << b->name << " " << shape_text(b) << "\n";
  for (const Buffer& b : f.outputs) h << "//   args[" << n++ << "]: output " << b->name << " " << shape_text(b) << "\n";
  h << "// It uses OpenMP's default number of threads (set OMP_NUM_THREADS to change it).\n"
    << "#pragma once\n#include <cstdint>\n\n"
    << "extern \"C\" int ingot_abi_version(void);\n"
    << "extern \"C\" int ingot_num_inputs(void);\n"
    << "extern \"C\" int ingot_num_outputs(void);\n"
    << "extern \"C\" int64_t ingot_workspace_bytes(void);\n"
    << "extern \"C\" void ingot_run(void* const* args, void* workspace);\n";
  e.header = h.str();

  std::ostringstream m;
  m << "// Example: fills the inputs like ingot's random_inputs(seed), runs " << e.name
    << " once and writes every output\n// to <output name>.bin (raw elements) in the current directory.\n"
    << "#include <cmath>\n#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <random>\n"
    << "#include <vector>\n\n#include \"" << e.name << ".h\"\n\n"
    << "template <class T>\n"
    << "static std::vector<T> random_values(int64_t count, uint64_t seed, double low, double high, bool is_float) {\n"
    << "  std::vector<T> v(count);\n  std::mt19937_64 gen(seed);\n"
    << "  for (int64_t i = 0; i < count; ++i) {\n"
    << "    double u = double(gen() >> 40) / double(1 << 24);\n"
    << "    double x = low + (high - low) * u;\n"
    << "    v[i] = T(is_float ? x : std::floor(x));\n  }\n  return v;\n}\n\n"
    << "int main(int argc, char** argv) {\n"
    << "  uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : " << input_seed << "ull;\n";
  n = 0;
  for (const Buffer& b : f.inputs) {
    auto it = input_ranges.find(b->name);
    ValueRange range = it != input_ranges.end() ? it->second : default_value_range(b->dtype);
    m << "  auto in" << n << " = random_values<" << c_type(b->dtype) << ">(" << b->num_elements() << ", seed + " << n
      << ", " << exact_double(range.low) << ", " << exact_double(range.high) << ", "
      << (is_float(b->dtype) ? "true" : "false") << ");  // " << b->name << "\n";
    ++n;
  }
  int outputs = 0;
  for (const Buffer& b : f.outputs)
    m << "  std::vector<" << c_type(b->dtype) << "> out" << outputs++ << "(" << b->num_elements() << ");  // "
      << b->name << "\n";
  m << "  void* args[] = {";
  for (int i = 0; i < n; ++i) m << "in" << i << ".data(), ";
  for (int i = 0; i < outputs; ++i) m << "out" << i << ".data()" << (i + 1 < outputs ? ", " : "");
  m << "};\n"
    << "  void* workspace = nullptr;\n"
    << "  if (ingot_workspace_bytes() > 0) workspace = std::aligned_alloc(64, (ingot_workspace_bytes() + 63) / 64 * "
       "64);\n"
    << "  ingot_run(args, workspace);\n  std::free(workspace);\n";
  for (int i = 0; i < outputs; ++i) {
    const Buffer& b = f.outputs[i];
    m << "  {\n    FILE* file = std::fopen(\"" << b->name << ".bin\", \"wb\");\n"
      << "    if (!file || std::fwrite(out" << i << ".data(), sizeof(out" << i << "[0]), out" << i
      << ".size(), file) != out" << i << ".size()) {\n"
      << "      std::perror(\"" << b->name << ".bin\");\n      return 1;\n    }\n    std::fclose(file);\n"
      << "    double sum = 0;\n    for (auto x : out" << i << ") sum += double(x);\n"
      << "    std::printf(\"" << b->name << ": %zu elements, sum %.6g\\n\", out" << i << ".size(), sum);\n  }\n";
  }
  m << "  return 0;\n}\n";
  e.example_main = m.str();
  return e;
}

std::vector<std::string> write_exported_program(const ExportedProgram& e, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> files = {
      {e.name + ".cpp", e.kernel_source},
      {e.name + ".h", e.header},
      {e.name + "_main.cpp", e.example_main},
      {"README.txt", "Exported by ingot. Build and run:\n  " + e.build_command + "\n  ./" + e.name +
                         " [seed]\nThe program writes each output to <name>.bin.\n"}};
  std::vector<std::string> written;
  for (const auto& [name, text] : files) {
    std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
    written.push_back(path);
  }
  return written;
}

}  // namespace ingot
