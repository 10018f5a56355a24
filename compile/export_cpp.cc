#include "compile/export_cpp.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"

namespace ingot {

namespace {

// The data files are defined as little-endian; HostTensor's bytes are written as they are.
static_assert(std::endian::native == std::endian::little, "export writes host tensors' bytes as little-endian");

std::string c_identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

std::string tensor_file_name(const std::string& tensor) {
  std::string out;
  for (char c : tensor) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return out + ".bin";
}

// The element type's name in the exported main's table.
const char* element_type(DType t) {
  switch (t) {
    case DType::kBool: return "ElementType::kBool";
    case DType::kInt32: return "ElementType::kI32";
    case DType::kInt64: return "ElementType::kI64";
    case DType::kFloat32: return "ElementType::kF32";
    case DType::kBFloat16: return "ElementType::kBF16";  // bit patterns, as HostTensor holds them
    default: return nullptr;
  }
}

std::string shape_text(DType dtype, const std::vector<int64_t>& shape) {
  std::string s = dtype_name(dtype);
  s += "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

std::string shape_text(const Buffer& b) { return shape_text(b->dtype, b->shape); }

// Keeps the tensor of each buffer, checked against it; throws naming the first that is missing or differs.
TensorMap tensors_of(const std::vector<Buffer>& buffers, TensorMap& given, const char* role) {
  TensorMap kept;
  for (const Buffer& b : buffers) {
    if (!element_type(b->dtype))
      throw std::invalid_argument(std::string("export: ") + role + " '" + b->name + "' is " + dtype_name(b->dtype) +
                                  ", which the exported program cannot hold (bool, i32, i64 and f32 only)");
    auto node = given.extract(b->name);
    if (node.empty()) throw std::invalid_argument(std::string("export: no tensor for ") + role + " '" + b->name + "'");
    const HostTensor& t = node.mapped();
    if (t.dtype() != b->dtype || t.shape() != b->shape)
      throw std::invalid_argument(std::string("export: the tensor for ") + role + " '" + b->name + "' is " +
                                  shape_text(t.dtype(), t.shape()) + ", the buffer " + shape_text(b));
    kept.insert(std::move(node));
  }
  return kept;
}

// Two tensors whose names differ only in characters a file name cannot hold would overwrite each other's files.
void check_file_names_differ(const LoopFunction& f) {
  std::set<std::string> inputs, outputs;
  for (const auto& [buffers, files] : {std::pair{&f.inputs, &inputs}, std::pair{&f.outputs, &outputs}})
    for (const Buffer& b : *buffers)
      if (!files->insert(tensor_file_name(b->name)).second)
        throw std::invalid_argument("export: two tensors would share the data file " + tensor_file_name(b->name));
}

// A C string literal of the text: tensor names come from users' models and may hold any character.
std::string c_string(const std::string& text) {
  std::ostringstream s;
  s << '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      s << '\\' << c;
    else if (std::isprint(c))
      s << c;
    else
      s << '\\' << char('0' + (c >> 6)) << char('0' + ((c >> 3) & 7)) << char('0' + (c & 7));
  }
  s << '"';
  return s.str();
}

// The shortest literal that reads back as exactly v.
std::string exact_double(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}

// The table of tensors the exported main reads and checks: name, file, element type, shape text, elements, and an
// output's allowance for f32 rounding (0 where none).
std::string tensor_table(const char* variable, const std::vector<Buffer>& buffers,
                         const std::map<std::string, double>& rounding_allowance = {}) {
  std::ostringstream s;
  s << "const std::vector<TensorSpec> " << variable << " = {\n";
  for (const Buffer& b : buffers) {
    auto allowance = rounding_allowance.find(b->name);
    s << "    {" << c_string(b->name) << ", \"" << tensor_file_name(b->name) << "\", " << element_type(b->dtype)
      << ", \"" << shape_text(b) << "\", " << b->num_elements() << ", "
      << exact_double(allowance == rounding_allowance.end() ? 0.0 : allowance->second) << "},\n";
  }
  s << "};\n";
  return s.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The exported main, with @NAME@, @RTOL@, @ATOL@, @INPUTS@ and @OUTPUTS@ to fill in. It uses only the standard
// library (C++17) and the kernel's header, so that the export builds anywhere g++ and OpenMP do.
constexpr const char* kMainTemplate =
    R"(// Checks @NAME@ on this machine: reads the inputs from DATA_DIR/inputs, runs the kernel, writes every output to
// DATA_DIR/outputs and compares it with DATA_DIR/reference by ingot's verification rule. See README.txt.
// Usage: ./@NAME@ [DATA_DIR] [--repeat N]; DATA_DIR defaults to the current directory.
// Exit status: 0 every output matches, 1 an output differs, 2 a data file is missing or has the wrong size, or a
// bad argument@MORE_EXIT_STATUSES@.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>
@MAIN_INCLUDES@
#include "@NAME@.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the data files hold little-endian elements");

namespace {

// An output matches when every element has |actual - expected| <= kAtol * max(1, max |expected|) + rounding + kRtol *
// |expected| (a NaN matches only a NaN): the absolute part grows with the output's scale because the kernel may sum
// reductions in another order than the reference did, and with the f32 rounding noise of the output (its spec's
// rounding: 4 times how far the reference moves when its sums are accumulated in double).
constexpr double kRtol = @RTOL@;
constexpr double kAtol = @ATOL@;

enum class ElementType { kBool, kI32, kI64, kF32, kBF16 };

struct TensorSpec {
  const char* name;
  const char* file;  // its file under inputs/, reference/ and outputs/
  ElementType type;
  const char* shape;  // for messages
  int64_t elements;
  double rounding;  // an output's allowance for f32 rounding besides kAtol and kRtol; 0 for inputs
};

// In the order of ingot_run's args (see @NAME@.h).
@INPUTS@
@OUTPUTS@
size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::kBool: return 1;
    case ElementType::kI32: return 4;
    case ElementType::kI64: return 8;
    case ElementType::kF32: return 4;
    case ElementType::kBF16: return 2;
  }
  return 0;
}

double element(ElementType type, const unsigned char* data, int64_t i) {
  switch (type) {
    case ElementType::kBool: return data[i] ? 1.0 : 0.0;
    case ElementType::kI32: {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      return double(v);
    }
    case ElementType::kI64: {
      int64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      return double(v);
    }
    case ElementType::kF32: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return double(v);
    }
    case ElementType::kBF16: {  // the upper half of an f32
      uint16_t half;
      std::memcpy(&half, data + 2 * i, 2);
      const uint32_t bits = uint32_t(half) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return double(v);
    }
  }
  return 0;
}

// 64-byte aligned, as ingot's tensors are when it measures the kernel.
struct Tensor {
  std::vector<unsigned char> storage;
  unsigned char* data = nullptr;
  size_t bytes = 0;
};

Tensor allocate(size_t bytes) {
  Tensor t;
  t.bytes = bytes;
  t.storage.resize(bytes + 63);
  t.data = t.storage.data() + (64 - reinterpret_cast<uintptr_t>(t.storage.data()) % 64) % 64;
  return t;
}

Tensor allocate(const TensorSpec& spec) { return allocate(size_t(spec.elements) * element_bytes(spec.type)); }

// Every file is read before anything runs, so that one run names every missing or short file.
bool read_file(const std::filesystem::path& path, const char* role, const TensorSpec& spec, Tensor& t) {
  std::error_code error;
  uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    std::fprintf(stderr, "%s: %s (%s %s %s, %zu bytes)\n", path.string().c_str(), error.message().c_str(), role,
                 spec.name, spec.shape, t.bytes);
    return false;
  }
  if (size != t.bytes) {
    std::fprintf(stderr, "%s: %ju bytes, expected %zu (%s %s %s)\n", path.string().c_str(), size, t.bytes, role,
                 spec.name, spec.shape);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(t.data), std::streamsize(t.bytes))) {
    std::fprintf(stderr, "%s: cannot be read\n", path.string().c_str());
    return false;
  }
  return true;
}

bool write_file(const std::filesystem::path& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  if (out.write(reinterpret_cast<const char*>(t.data), std::streamsize(t.bytes))) return true;
  std::fprintf(stderr, "%s: cannot be written\n", path.string().c_str());
  return false;
}

void print_value(ElementType type, double v) {
  if (type == ElementType::kF32 || type == ElementType::kBF16)
    std::printf("%.9g", v);
  else
    std::printf("%.0f", v);
}

// Prints one line for the output: ok, or how many elements differ and the one that differs most.
bool check(const TensorSpec& spec, const Tensor& actual, const Tensor& expected) {
  double scale = 1;
  for (int64_t i = 0; i < spec.elements; ++i) scale = std::max(scale, std::fabs(element(spec.type, expected.data, i)));
  const double atol = kAtol * scale + spec.rounding;
  int64_t differing = 0, worst = -1;
  double worst_excess = 0, max_error = 0;
  for (int64_t i = 0; i < spec.elements; ++i) {
    double a = element(spec.type, actual.data, i), e = element(spec.type, expected.data, i);
    if (std::isnan(a) && std::isnan(e)) continue;
    double error = std::fabs(a - e), allowed = atol + kRtol * std::fabs(e);
    if (!std::isnan(error)) max_error = std::max(max_error, error);
    if (error <= allowed) continue;
    double excess = std::isnan(error) ? INFINITY : error - allowed;
    if (worst < 0 || excess > worst_excess) worst = i, worst_excess = excess;
    ++differing;
  }
  if (worst < 0) {
    std::printf("%s %s: ok (max abs error %.3g)\n", spec.name, spec.shape, max_error);
    return true;
  }
  double a = element(spec.type, actual.data, worst), e = element(spec.type, expected.data, worst);
  std::printf("%s %s: MISMATCH in %lld of %lld elements; worst, element %lld: got ", spec.name, spec.shape,
              (long long)differing, (long long)spec.elements, (long long)worst);
  print_value(spec.type, a);
  std::printf(", expected ");
  print_value(spec.type, e);
  std::printf(" (allowed error %.3g)\n", atol + kRtol * std::fabs(e));
  return false;
}

int usage(const char* program) {
  std::fprintf(stderr, "usage: %s [DATA_DIR] [--repeat N]\n", program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path dir = ".";
  bool dir_given = false;
  long repeat = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc) {
      char* end = nullptr;
      repeat = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || repeat < 1) {
        std::fprintf(stderr, "--repeat: expected a positive count, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0]);
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && !dir_given) {
      dir = arg;
      dir_given = true;
    } else {
      return usage(argv[0]);
    }
  }

  bool files_ok = true;
  std::vector<Tensor> inputs, outputs, references;
  for (const TensorSpec& spec : kInputs) {
    inputs.push_back(allocate(spec));
    files_ok &= read_file(dir / "inputs" / spec.file, "input", spec, inputs.back());
  }
  for (const TensorSpec& spec : kOutputs) {
    outputs.push_back(allocate(spec));
    references.push_back(allocate(spec));
    files_ok &= read_file(dir / "reference" / spec.file, "reference of output", spec, references.back());
  }
  if (!files_ok) return 2;

@RUN@  if (repeat > 0) {
    std::sort(milliseconds.begin(), milliseconds.end());
    size_t n = milliseconds.size();
    std::printf("@NAME@: median %.4f ms of %zu runs\n", (milliseconds[(n - 1) / 2] + milliseconds[n / 2]) / 2, n);
  }

  std::error_code error;
  std::filesystem::create_directories(dir / "outputs", error);
  if (error) {
    std::fprintf(stderr, "%s: %s\n", (dir / "outputs").string().c_str(), error.message().c_str());
    return 2;
  }
  size_t differing = 0;
  for (size_t n = 0; n < kOutputs.size(); ++n) {
    if (!write_file(dir / "outputs" / kOutputs[n].file, outputs[n])) return 2;
    differing += !check(kOutputs[n], outputs[n], references[n]);
  }
  if (differing == 0)
    std::printf("every output matches the reference\n");
  else
    std::printf("%zu of %zu outputs differ from the reference\n", differing, kOutputs.size());
  return differing == 0 ? 0 : 1;
}
)";

// The CPU main's run: ingot_run on the host tensors.
constexpr const char* kCpuRun = R"(  std::vector<void*> args;
  for (Tensor& t : inputs) args.push_back(t.data);
  for (Tensor& t : outputs) args.push_back(t.data);
  Tensor workspace = allocate(size_t(ingot_workspace_bytes()));
  std::vector<double> milliseconds;
  for (long run = 0; run < std::max(repeat, 1L); ++run) {
    auto start = std::chrono::steady_clock::now();
    ingot_run(args.data(), workspace.bytes > 0 ? workspace.data : nullptr);
    milliseconds.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
)";

// The rule's allowance for f32 rounding, where an output has one.
std::string rounding_text(const ExportedProgram& e) {
  if (e.rounding_allowance.empty()) return "";
  std::ostringstream r;
  r << "\n+ an allowance for f32 rounding (" << kRoundingNoiseFactor
    << " times how far the reference moves when its sums run in double):";
  for (const auto& [name, allowance] : e.rounding_allowance) r << " " << name << " " << allowance;
  return r.str();
}

std::string readme_text(const ExportedProgram& e, const ExportBackend& backend) {
  std::ostringstream r;
  r << e.name << ": a program tuned by ingot, as standalone " << backend.language << " that checks itself.\n\n"
    << "Build (" << backend.build_needs << "; nothing of ingot is needed):\n  " << e.build_command << "\n\n"
    << "Run, in this folder (or give the folder that holds inputs/ and reference/ as DATA_DIR):\n"
    << "  ./" << e.name << " [DATA_DIR] [--repeat N]\n"
    << "It reads every input, runs the kernel (N times with --repeat, printing the median time in ms), writes each\n"
    << "output to outputs/ and compares it with reference/, printing one line per output: ok, or how many elements\n"
    << "differ and the worst of them. Exit status: 0 when every output matches, 1 when one differs, 2 when a data\n"
    << "file is missing or has the wrong size" << backend.more_exit_statuses << ". " << backend.readme_run_note << "\n"
    << "An output matches when every element has |actual - expected| <= " << e.atol << " * max(1, max |expected|) + "
    << e.rtol << " * |expected|" << rounding_text(e) << ",\nas ingot verifies the programs it measures.\n\n"
    << "Files:\n";
  const size_t width = std::max(e.kernel_file.size(), e.main_file.size()) + 2;
  auto file = [&](const std::string& name, const std::string& what) {
    r << "  " << name << std::string(width > name.size() ? width - name.size() : 1, ' ') << what << "\n";
  };
  file(e.kernel_file, backend.kernel_file_note);
  file(e.name + ".h", "its C interface, with the order, dtype and shape of every buffer");
  file(e.main_file, "the check above");
  r << "  inputs/<tensor>.bin     each input: the values ingot measured the program with\n"
    << "  reference/<tensor>.bin  each output as ingot's interpreter computed it from those inputs\n"
    << "  outputs/<tensor>.bin    each output of the last run (written by the check)\n"
    << "Data files hold raw little-endian elements in row-major order: f32 as float, i32 and i64 as int32_t and\n"
    << "int64_t, bool as one byte, bf16 as the upper 16 bits of a float.\n";
  return r.str();
}

}  // namespace

std::string export_buffer_list(const LoopFunction& f) {
  std::ostringstream h;
  int n = 0;
  for (const Buffer& b : f.inputs) h << "//   args[" << n++ << "]: input  " << b->name << " " << shape_text(b) << "\n";
  for (const PackedLayout& layout : f.packed_inputs)
    h << "//   (input " << layout.to_string() << ": the element at index i of the model's tensor sits at\n"
      << "//   [i[" << layout.dim << "] / " << layout.block << ", the other indices, i[" << layout.dim << "] % "
      << layout.block << "]; inputs/ holds it packed)\n";
  for (const Buffer& b : f.outputs) h << "//   args[" << n++ << "]: output " << b->name << " " << shape_text(b) << "\n";
  return h.str();
}

std::string export_file_stem(const LoopFunction& f) { return c_identifier(f.name); }

std::string export_declarations(const std::string& includes, const std::string& run_declaration) {
  return "#pragma once\n#include <cstdint>\n\n" + includes +
         "extern \"C\" int ingot_abi_version(void);\n"
         "extern \"C\" int ingot_num_inputs(void);\n"
         "extern \"C\" int ingot_num_outputs(void);\n"
         "extern \"C\" int64_t ingot_workspace_bytes(void);\n"
         "extern \"C\" " +
         run_declaration + ";\n";
}

ExportedProgram export_program(const LoopFunction& f, TensorMap inputs, TensorMap reference,
                               const ExportBackend& backend, const ExportTolerance& tolerance) {
  ExportedProgram e;
  // A packed input's data file holds it packed, as the function takes it: packed once, here.
  for (const PackedLayout& layout : f.packed_inputs)
    if (auto it = inputs.find(layout.tensor); it != inputs.end()) it->second = layout.pack(it->second);
  e.inputs = tensors_of(f.inputs, inputs, "input");
  e.reference = tensors_of(f.outputs, reference, "output");
  check_file_names_differ(f);
  e.name = export_file_stem(f);
  e.kernel_file = e.name + backend.kernel_suffix;
  e.main_file = e.name + "_main.cpp";
  e.kernel_source = backend.kernel_source;
  e.build_command = backend.build_command;
  e.header = backend.header;

  const bool bf16 =
      std::any_of(f.inputs.begin(), f.inputs.end(), [](const Buffer& b) { return b->dtype == DType::kBFloat16; });
  // The verification rule of ingot's runner (runtime/runner.h) with the given tolerance, at least bf16's (ir/dtype.h)
  // for a program with bf16 inputs.
  e.rtol = bf16 ? std::max(tolerance.rtol, kBf16Tolerance) : tolerance.rtol;
  e.atol = bf16 ? std::max(tolerance.atol, kBf16Tolerance) : tolerance.atol;
  for (const Buffer& b : f.outputs)
    if (auto noise = tolerance.rounding_noise.find(b->name);
        noise != tolerance.rounding_noise.end() && noise->second > 0)
      e.rounding_allowance[b->name] = kRoundingNoiseFactor * noise->second;
  std::string main = replace_all(kMainTemplate, "@INPUTS@", tensor_table("kInputs", f.inputs));
  main = replace_all(main, "@OUTPUTS@", tensor_table("kOutputs", f.outputs, e.rounding_allowance));
  main = replace_all(main, "@RTOL@", exact_double(e.rtol));
  main = replace_all(main, "@ATOL@", exact_double(e.atol));
  main = replace_all(main, "@RUN@", backend.main_run);
  main = replace_all(main, "@MAIN_INCLUDES@", backend.main_includes);
  main = replace_all(main, "@MORE_EXIT_STATUSES@", backend.more_exit_statuses);
  e.main_source = replace_all(main, "@NAME@", e.name);
  e.readme = readme_text(e, backend);
  return e;
}

ExportedProgram export_cpp(const LoopFunction& f, TensorMap inputs, TensorMap reference, const std::string& isa_flags,
                           const ExportTolerance& tolerance) {
  ExportBackend cpu;
  const std::string name = export_file_stem(f);
  cpu.language = "C++";
  cpu.build_needs = "g++ with OpenMP";
  cpu.kernel_suffix = ".cpp";
  cpu.kernel_file_note = "the kernel, ingot_run";
  cpu.kernel_source = "#include \"" + name + ".h\"\n" + cpp_source(f).source;
  cpu.build_command =
      "g++ -O3 " + isa_flags + " -fno-math-errno -fopenmp " + name + ".cpp " + name + "_main.cpp -o " + name;
  if (std::string math = vector_math_flags(); !math.empty()) cpu.build_command += " " + math;
  cpu.readme_run_note = "OMP_NUM_THREADS sets the number of threads.";
  cpu.main_run = kCpuRun;

  std::ostringstream h;
  h << "// " << name << ": a program compiled by ingot, as standalone C++.\n"
    << "// Build: " << cpu.build_command << "\n//\n"
    << "// Call ingot_run(args, workspace) with args = one pointer per buffer, in this order, each to dense\n"
    << "// row-major elements, and workspace = ingot_workspace_bytes() bytes aligned to 64 (may be null when 0):\n"
    << export_buffer_list(f) << "// It uses OpenMP's default number of threads (set OMP_NUM_THREADS to change it).\n"
    << export_declarations("", "void ingot_run(void* const* args, void* workspace)");
  cpu.header = h.str();
  return export_program(f, std::move(inputs), std::move(reference), cpu, tolerance);
}

std::vector<std::string> write_exported_program(const ExportedProgram& e, const std::string& dir) {
  const std::filesystem::path root(dir);
  for (const char* folder : {"inputs", "reference"}) {
    std::error_code error;
    std::filesystem::create_directories(root / folder, error);
    if (error)
      throw std::runtime_error("cannot create the folder " + (root / folder).string() + ": " + error.message());
  }
  std::vector<std::string> written;
  // Each file is written beside its place and renamed into it once whole: a full disk or a killed export leaves
  // an earlier export's file as it was, not half of a new one.
  auto write = [&](const std::filesystem::path& path, const void* data, size_t bytes) {
    const std::filesystem::path partial = path.string() + ".partial." + std::to_string(::getpid());
    std::FILE* out = std::fopen(partial.c_str(), "wb");
    int error = out ? 0 : errno;
    if (out && bytes && std::fwrite(data, 1, bytes, out) != bytes) error = errno;
    if (out && std::fclose(out) != 0 && !error) error = errno;
    if (!error && std::rename(partial.c_str(), path.c_str()) != 0) error = errno;
    if (error) {
      std::remove(partial.c_str());
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(error));
    }
    written.push_back(path.string());
  };
  for (const auto& [name, text] :
       {std::pair{e.kernel_file, &e.kernel_source}, std::pair{e.name + ".h", &e.header},
        std::pair{e.main_file, &e.main_source}, std::pair{std::string("README.txt"), &e.readme}})
    write(root / name, text->data(), text->size());
  for (const auto& [folder, tensors] : {std::pair{"inputs", &e.inputs}, std::pair{"reference", &e.reference}})
    for (const auto& [name, tensor] : *tensors)
      write(root / folder / tensor_file_name(name), tensor.data(), tensor.num_bytes());
  return written;
}

}  // namespace ingot
