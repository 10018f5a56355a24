#include "codegen/cpp_printer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "ir/functor.h"
#include "ir/simplify.h"
#include "lower/guard_bound.h"
#include "lower/kernels.h"
#include "lower/stage_intervals.h"
#include "lower/vector_maps.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

constexpr int64_t kWorkspaceAlignment = 64;
// Where the code of bf16 products (AVX-512 BF16's vdpbf16ps, with AVX-512 BW's 16-bit masks) compiles.
constexpr const char* kBf16Guard = "#if defined(__AVX512BF16__) && defined(__AVX512BW__)";
// Where the code of AMX's bf16 tiles compiles (its rows are rounded to bf16 by AVX-512 BF16's vcvtne2ps2bf16).
constexpr const char* kAmxGuard =
    "#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BF16__) && defined(__AVX512BW__) && "
    "defined(__linux__)";
constexpr int64_t kCacheLineBytes = 64;  // x86-64 and most AArch64 cores
// AMX: 8 tile registers of up to 16 rows (kAmxTileRows) of 64 bytes; a bf16 tile's row is 32 values of k.
constexpr int64_t kAmxTiles = 8, kAmxRowBytes = 64, kAmxStepK = kAmxTileK;
// Thread-local arrays up to this size live on the stack; larger ones on the heap, because OpenMP worker
// threads may have small stacks.
constexpr int64_t kMaxStackArrayBytes = 64 * 1024;

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument("C++ printer: " + message); }

const char* c_type(DType t, const std::string& where) {
  switch (t) {
    case DType::kBool: return "uint8_t";
    case DType::kInt32: return "int32_t";
    case DType::kInt64: return "int64_t";
    case DType::kFloat32: return "float";
    case DType::kBFloat16: return "uint16_t";  // bit patterns: only casts to and from f32 compute with them
    case DType::kFloat16: break;
  }
  fail(std::string(dtype_name(t)) + " is not supported by the CPU backend yet (" + where + ")");
}

// The C type an expression of this dtype has in generated code; bool values are C++ bool in expressions
// and uint8_t only in memory.
const char* value_type(DType t, const std::string& where) { return t == DType::kBool ? "bool" : c_type(t, where); }

// Rejects arithmetic on 16-bit floats, naming the expression (printed only on failure: printing is quadratic). bf16
// values are loaded, stored and converted (CastNode) only: a program computes with them in f32 (workloads/
// bf16_products.h).
void require_supported(DType t, const Expr& e) {
  if (t == DType::kFloat16) c_type(t, "in " + to_string(e));
  if (t == DType::kBFloat16)
    fail("bf16 arithmetic is not supported by the CPU backend: cast to f32 first (in " + to_string(e) + ")");
}

std::string float_literal(double value) {
  float f = float(value);
  if (std::isnan(f)) return "__builtin_nanf(\"\")";
  if (std::isinf(f)) return f > 0 ? "__builtin_inff()" : "-__builtin_inff()";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f);  // shortest text that reads back as the same float
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

bool is_cpp_keyword(const std::string& s) {
  static const std::set<std::string> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // Names the generated code itself uses.
      "args", "workspace", "std", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
      "uint64_t", "size_t", "main", "omp", "NULL", "errno", "assert", "restrict"};
  return keywords.count(s) > 0;
}

// Turns IR names ("layer.0/weight", "i.outer") into distinct, readable C identifiers. A canonical table
// names everything by order of first use instead (b0, v0, ...), so that two loop nests that differ only in
// names print the same text.
class NameTable {
 public:
  explicit NameTable(bool canonical = false) : canonical_(canonical) {}
  std::string buffer(const std::string& name) { return assign("buffer " + name, name); }
  std::string loop_var(const std::string& name) { return assign("var " + name, name); }
  // The malloc'ed block behind a large local buffer.
  std::string heap_storage(const std::string& buffer_name) {
    return assign("storage " + buffer_name, buffer_name + "_storage");
  }

 private:
  std::string assign(const std::string& key, const std::string& name) {
    if (auto it = assigned_.find(key); it != assigned_.end()) return it->second;
    if (canonical_) return assigned_[key] = key.substr(0, 1) + std::to_string(assigned_.size());
    std::string base;
    for (char c : name) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])) || base.rfind("ingot_", 0) == 0 ||
        base[0] == '_')
      base = "v_" + base;
    std::string candidate = base;
    for (int n = 1; is_cpp_keyword(candidate) || taken_.count(candidate); ++n)
      candidate = base + "_" + std::to_string(n);
    taken_.insert(candidate);
    assigned_[key] = candidate;
    return candidate;
  }
  bool canonical_;
  std::map<std::string, std::string> assigned_;
  std::set<std::string> taken_;
};

// kExp comes before kTanh, whose definition calls it: definitions print in this order.
enum class Helper : uint8_t { kFloorDiv, kFloorMod, kMin, kMax, kAbs, kErf, kExp, kTanh, kBf16ToF32, kF32ToBf16 };

std::string helper_name(Helper h, DType t) {
  const char* suffix = t == DType::kInt32 ? "i32" : t == DType::kInt64 ? "i64" : "f32";
  switch (h) {
    case Helper::kFloorDiv: return std::string("ingot_floordiv_") + suffix;
    case Helper::kFloorMod: return std::string("ingot_floormod_") + suffix;
    case Helper::kMin: return std::string("ingot_min_") + suffix;
    case Helper::kMax: return std::string("ingot_max_") + suffix;
    case Helper::kAbs: return std::string("ingot_abs_") + suffix;
    case Helper::kErf: return std::string("ingot_erf_") + suffix;
    case Helper::kExp: return std::string("ingot_exp_") + suffix;
    case Helper::kTanh: return std::string("ingot_tanh_") + suffix;
    case Helper::kBf16ToF32: return "ingot_bf16_to_f32";
    case Helper::kF32ToBf16: return "ingot_f32_to_bf16";
  }
  return "";
}

// exp(r) on |r| <= ln(2) / 2 (Cephes' degree-6 polynomial) and tanh(a) below a = 0.625 (an odd polynomial in z = a^2):
// the scalar helpers' and the vector maps' (ingot_exp_f32x16 / _f32x8, ingot_tanh_f32x16 / _f32x8) alike.
const std::string kExpOfR =
    "1.0f + r + r * r * (0.5f + r * (0.166666657f + r * (0.0416657962f + r * (0.00833345205f + r * (0.00139819994f + "
    "r * 0.000198756915f)))))";
const std::string kTanhNearZero =
    "a + a * z * (-0.333332819f + z * (0.133314422f + z * (-0.0537397155f + z * (0.0206390888f + z * "
    "-0.00570498872f))))";

// The opening of erf's and tanh's helpers: x's sign bit, and a = |x|.
const std::string kSignAndMagnitude =
    "  uint32_t bits;\n"
    "  std::memcpy(&bits, &x, 4);\n"
    "  const uint32_t sign = bits & 0x80000000u, magnitude = bits ^ sign;\n"
    "  float a;\n"
    "  std::memcpy(&a, &magnitude, 4);\n";

std::string helper_definition(Helper h, DType t) {
  std::string T = c_type(t, "helper"), name = helper_name(h, t);
  std::string head = "static inline " + T + " " + name + "(" + T + " a, " + T + " b) {";
  switch (h) {
    case Helper::kFloorDiv:
      return head + "\n  " + T + " q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}";
    case Helper::kFloorMod:
      return head + "\n  " + T + " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}";
    // The same choice as std::min / std::max, including which operand a NaN comparison returns.
    case Helper::kMin: return head + " return b < a ? b : a; }";
    case Helper::kMax: return head + " return a < b ? b : a; }";
    case Helper::kAbs: return "static inline " + T + " " + name + "(" + T + " a) { return a < 0 ? -a : a; }";
    case Helper::kBf16ToF32:
      return "static inline float " + name +
             "(uint16_t b) {\n"
             "  const uint32_t bits = uint32_t(b) << 16;\n"
             "  float f;\n"
             "  std::memcpy(&f, &bits, 4);\n"
             "  return f;\n"
             "}";
    // To nearest, ties to even, as AVX-512 BF16's conversions and HostTensor round; a NaN stays a quiet NaN. Selected
    // without a branch, so that a simd loop vectorizes it. (AVX-512 BF16's conversions also flush subnormals to zero,
    // where this rounds their bits: the two differ below 1.2e-38.)
    case Helper::kF32ToBf16:
      return "static inline uint16_t " + name +
             "(float f) {\n"
             "  uint32_t bits;\n"
             "  std::memcpy(&bits, &f, 4);\n"
             "  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16, quiet = (bits >> 16) | 0x40u;\n"
             "  return uint16_t((bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);\n"
             "}";
    // Two polynomials, both evaluated and one selected without a branch, so that a simd loop inlines and vectorizes
    // it: |x| P(x^2) below 1 and Q((|x| - 2.46) / 1.46) up to 3.92, above which erf is 1.0f; the sign is x's.
    // Least-squares Chebyshev fits made for ingot: within 2.5 ulp of erf over [-6, 6] (libmvec's erff, called before,
    // is within 4, but a call per vector spills every register around it: BERT's GELU over its 128 x 3072 FFN
    // activations took 0.66 ms with it and 0.25 ms inline). NaN stays NaN.
    case Helper::kErf: {
      // Horner forms of the two polynomials, lowest coefficient first.
      auto horner = [](const std::string& var, const std::vector<const char*>& coefficients) {
        std::string text = coefficients.back();
        for (size_t c = coefficients.size() - 1; c-- > 0;)
          text = std::string(coefficients[c]) + " + " + var + " * (" + text + ")";
        return text;
      };
      const std::string inner = horner("u", {"1.12837923f", "-0.376126289f", "0.112836346f", "-0.0268560704f",
                                             "0.00519296154f", "-0.000805378717f", "8.00701164e-05f"});
      const std::string outer =
          horner("s", {"0.999496639f", "0.00387813267f", "-0.0139289796f", "0.0305991136f", "-0.0450473353f",
                       "0.0451143123f", "-0.0284471773f", "0.00646809675f", "0.00734618213f", "-0.00898237899f",
                       "0.00333930552f", "0.00154570129f", "-0.00162764161f", "2.66311799e-05f", "0.000219380396f"});
      // The selections are bit masks, not ?:, which g++ turns into branches that it cannot if-convert in a loop that
      // also calls expf (errno makes the call clobber memory): the loop would stay scalar.
      return "static inline float " + name + "(float x) {\n" + kSignAndMagnitude +
             "  const float u = a * a;\n"
             "  const float inner = a * (" +
             inner + ");\n  const float s = (a - 2.46f) * 0.684931517f;\n  const float outer = " + outer +
             ";\n"
             "  uint32_t inner_bits, outer_bits;\n"
             "  std::memcpy(&inner_bits, &inner, 4);\n"
             "  std::memcpy(&outer_bits, &outer, 4);\n"
             "  const uint32_t use_inner = 0u - uint32_t(a < 1.0f);\n"
             "  const uint32_t use_one = 0u - (uint32_t(a > 3.92f) | uint32_t(outer > 1.0f));\n"
             "  const uint32_t result =\n"
             "      sign | (inner_bits & use_inner) | (~use_inner & ((0x3f800000u & use_one) | (outer_bits & "
             "~use_one)));\n"
             "  float r;\n"
             "  std::memcpy(&r, &result, 4);\n"
             "  return r;\n"
             "}";
    }
    // exp(x) = 2^n exp(r), n = round(x / ln 2), with Cephes' degree-6 polynomial for exp(r) on |r| <= ln(2) / 2 and
    // ln 2 split in two so that x - n ln 2 is exact. Inline for the reason erf is: libmvec's expf, called before,
    // spills every vector register around each call. x is clamped to [-88, 89] on its bits with integer min (which
    // g++ vectorizes as such; a float ?: became branches or two masked paths) and n stops at 127: the largest x give
    // p 2^127 past FLT_MAX, infinity; below ln(FLT_MIN), 2^-127 is 0 (what flushing would make of the subnormal);
    // NaN is put back at the end. Within 1.3 ulp of exp up to 88.37, 5.2 ulp above (r past ln(2) / 2). A SiLU over
    // 4096 floats: 0.195 ns an element on one core, 0.274 with the masked version before it, libmvec's 0.209.
    case Helper::kExp:
      return "static inline float " + name +
             "(float x) {\n"
             "  uint32_t x_bits;\n"
             "  std::memcpy(&x_bits, &x, 4);\n"
             "  // x within [-88, 89] on its bits: unsigned min bounds the negatives, signed min the positives.\n"
             "  const uint32_t above_low = x_bits < 0xc2b00000u ? x_bits : 0xc2b00000u;\n"
             "  const int32_t clamped_bits = int32_t(above_low) < 0x42b20000 ? int32_t(above_low) : 0x42b20000;\n"
             "  float clamped;\n"
             "  std::memcpy(&clamped, &clamped_bits, 4);\n"
             "  const float shifted = clamped * 1.44269502f + 12582912.0f;  // n = round(x / ln 2) in the low bits\n"
             "  int32_t shifted_bits;\n"
             "  std::memcpy(&shifted_bits, &shifted, 4);\n"
             "  const int32_t n_bits = shifted_bits - 0x4b400000;\n"
             "  const int32_t n_int = n_bits < 127 ? n_bits : 127;\n"
             "  const float n = float(n_int);\n"
             "  const float r = (clamped - n * 0.693359375f) + n * 2.12194440e-4f;\n"
             "  const float p = " +
             kExpOfR +
             ";\n"
             "  const uint32_t scale_bits = uint32_t(n_int + 127) << 23;\n"
             "  float scale;\n"
             "  std::memcpy(&scale, &scale_bits, 4);\n"
             "  const float y = p * scale;\n"
             "  uint32_t y_bits;\n"
             "  std::memcpy(&y_bits, &y, 4);\n"
             "  const uint32_t nan = 0u - uint32_t(x != x);\n"
             "  const uint32_t bits = (y_bits & ~nan) | (x_bits & nan);\n"
             "  float result;\n"
             "  std::memcpy(&result, &bits, 4);\n"
             "  return result;\n"
             "}";
    // Cephes' odd polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above it, the sign x's; both evaluated and
    // one selected by bit masks, as erf. Within 1.4 ulp of tanh; tanh(-0) is -0, +-1 at infinity, NaN for NaN.
    case Helper::kTanh:
      return "static inline float " + name + "(float x) {\n" + kSignAndMagnitude +
             "  const float z = a * a;\n"
             "  const float small = " +
             kTanhNearZero +
             ";\n"
             "  const float large = 1.0f - 2.0f / (ingot_exp_f32(a + a) + 1.0f);\n"
             "  uint32_t small_bits, large_bits;\n"
             "  std::memcpy(&small_bits, &small, 4);\n"
             "  std::memcpy(&large_bits, &large, 4);\n"
             "  const uint32_t use_small = 0u - uint32_t(a < 0.625f);\n"
             "  const uint32_t result_bits = sign | (small_bits & use_small) | (large_bits & ~use_small);\n"
             "  float r;\n"
             "  std::memcpy(&r, &result_bits, 4);\n"
             "  return r;\n"
             "}";
  }
  return "";
}

// C++ operator precedence, higher binds tighter.
enum Precedence : int {
  kTernary = 20,
  kLogicalOr = 30,
  kLogicalAnd = 40,
  kEquality = 50,
  kRelational = 60,
  kAdditive = 70,
  kMultiplicative = 80,
  kUnary = 90,
  kPrimary = 100
};

struct Code {
  std::string text;
  int precedence = kPrimary;
  // False when the C expression's type is narrower than the IR dtype: an i64 literal that fits in an int.
  bool exact_type = true;
};

bool loop_is_parallel(LoopKind k) { return k == LoopKind::kParallel || is_gpu_block(k); }

class CppPrinter {
 public:
  CppPrinter(const LoopFunction& f, const CppPrintOptions& options) : f_(f), options_(options) {}

  PrintedCpp print() {
    // Vector maps take the width of the program's register tiles: AVX2's where they are AVX2's (a target of 8 lanes).
    for_each_stmt(f_.body, [&](const Stmt& s) {
      if (auto* loop = as<ForNode>(s); loop && loop->explicit_lanes == kAvx2VectorLanes) map_lanes_ = kAvx2VectorLanes;
    });
    declare_global_buffers();
    print_run_body();
    return assemble();
  }

 private:
  struct BufferInfo {
    std::string c_name;
    DType dtype;
  };

  // ---- Output -------------------------------------------------------------------------------------------

  void emit(const std::string& text) { body_.push_back(std::string(2 * indent_, ' ') + text); }
  void open(const std::string& text) {
    emit(text);
    ++indent_;
  }
  void close(const std::string& text = "}") {
    --indent_;
    emit(text);
  }

  // ---- Buffers and names ----------------------------------------------------------------------------------

  void declare_global_buffers() {
    std::set<std::string> stored;
    if (f_.body)
      for_each_stmt(f_.body, [&](const Stmt& s) {
        auto note_loads = [&](const Expr& e) {
          for_each_node(e, [&](const Expr& n) {
            if (auto* l = n.as<BufferLoadNode>()) used_.insert(l->buffer->name);
          });
        };
        if (auto* st = as<StoreNode>(s)) {
          stored.insert(st->buffer->name);
          used_.insert(st->buffer->name);
          note_loads(st->index);
          note_loads(st->value);
        } else if (auto* c = as<IfThenElseNode>(s)) {
          note_loads(c->cond);
        } else if (auto* p = as<PrefetchNode>(s)) {
          used_.insert(p->buffer->name);
        }
      });
    auto add = [&](const Buffer& b, const char* role) {
      if (!b) fail("function '" + f_.name + "' has a null " + role + " buffer");
      if (b->scope != MemoryScope::kGlobal)
        fail(std::string(role) + " buffer '" + b->name + "' must have global scope, not " +
             memory_scope_name(b->scope));
      if (buffers_.count(b->name)) fail("buffer name '" + b->name + "' is used twice in function '" + f_.name + "'");
      std::string where = std::string(role) + " buffer '" + b->name + "'";
      c_type(b->dtype, where);
      buffers_[b->name] = {names_.buffer(b->name), b->dtype};
    };
    for (const Buffer& b : f_.inputs) add(b, "input");
    for (const Buffer& b : f_.outputs) add(b, "output");
    for (const Buffer& b : f_.workspace) add(b, "workspace");
    stored_ = std::move(stored);
  }

  const BufferInfo& lookup(const Buffer& b) {
    auto it = buffers_.find(b->name);
    if (it == buffers_.end())
      fail("buffer '" + b->name + "' is used but is not an input, output, workspace or enclosing allocation");
    if (it->second.dtype != b->dtype)
      fail("buffer '" + b->name + "' is used as " + dtype_name(b->dtype) + " but declared " +
           dtype_name(it->second.dtype));
    return it->second;
  }

  // Without __restrict__: these pointers live through the whole parallel region, across its barriers, and each
  // thread has its own, so another thread's writes reach the objects they point to while they are in scope (a
  // small BERT with one parallel stage among serial ones gave wrong answers in 4 of 6 runs on 2 threads with it).
  std::string pointer_decl(const Buffer& b, bool read_only) {
    const BufferInfo& info = buffers_.at(b->name);
    return std::string(read_only ? "const " : "") + c_type(b->dtype, "") + "* " + info.c_name;
  }

  // ---- Expressions ----------------------------------------------------------------------------------------

  std::string wrap(const Code& c, int min_precedence) {
    return c.precedence >= min_precedence ? c.text : "(" + c.text + ")";
  }

  Code use_helper(Helper h, DType t, const std::vector<Expr>& args) {
    helpers_.insert({h, t});
    std::string text = helper_name(h, t) + "(";
    for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + expr(args[i]).text;
    return {text + ")", kPrimary, true};
  }

  // Whether e is provably >= 0: loop variables, non-negative constants and what +, *, /, %, min, max make of
  // them. Loads and subtractions are unknown.
  bool non_negative(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm: return e.as<IntImmNode>()->value >= 0;
      case ExprKind::kVar: return true;  // only loop variables are bound, and they run over [0, extent)
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        switch (n->op) {
          case BinaryOp::kAdd:
          case BinaryOp::kMul:
          case BinaryOp::kDiv:
          case BinaryOp::kMod:
          case BinaryOp::kMin: return non_negative(n->a) && non_negative(n->b);
          case BinaryOp::kMax: return non_negative(n->a) || non_negative(n->b);
          case BinaryOp::kSub: return false;
        }
        return false;
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        return n->dtype == DType::kInt64 && is_int(n->value.dtype()) && non_negative(n->value);
      }
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        return non_negative(n->true_value) && non_negative(n->false_value);
      }
      default: return false;
    }
  }

  Code binary_code(const Expr& e) {
    auto* n = e.as<BinaryNode>();
    DType t = n->dtype;
    require_supported(t, e);
    if ((n->op == BinaryOp::kMin || n->op == BinaryOp::kMax) && in_vector_map(e)) {
      // As the scalar helpers: min(a, b) is b < a ? b : a, and vminps / vmaxps return their second operand where the
      // comparison is false (a NaN).
      return {map_helper(n->op == BinaryOp::kMin ? "min" : "max") + "(" + vector_text(n->a) + ", " + vector_text(n->b) +
                  ")",
              kPrimary, true};
    }
    if (n->op == BinaryOp::kMin) return use_helper(Helper::kMin, t, {n->a, n->b});
    if (n->op == BinaryOp::kMax) return use_helper(Helper::kMax, t, {n->a, n->b});
    bool integer = is_int(t);
    if (integer && (n->op == BinaryOp::kDiv || n->op == BinaryOp::kMod) && !(non_negative(n->a) && non_negative(n->b)))
      return use_helper(n->op == BinaryOp::kDiv ? Helper::kFloorDiv : Helper::kFloorMod, t, {n->a, n->b});
    int p = (n->op == BinaryOp::kAdd || n->op == BinaryOp::kSub) ? kAdditive : kMultiplicative;
    Code a = expr(n->a), b = expr(n->b);
    std::string left = wrap(a, p);
    bool exact = a.exact_type || b.exact_type;
    // Two small i64 literals would otherwise be combined (and could overflow) in C's 32-bit int.
    if (t == DType::kInt64 && !exact) {
      left = "int64_t(" + a.text + ")";
      exact = true;
    }
    // The right operand needs parentheses at equal precedence: a - (b - c), and float a + (b + c) rounds
    // differently from (a + b) + c.
    return {left + " " + binary_op_name(n->op) + " " + wrap(b, p + 1), p, exact};
  }

  Code expr(const Expr& e) {
    if (!e) fail("null expression");
    if (!vector_loop_var_.empty() && (e.kind() == ExprKind::kBufferLoad || e.kind() == ExprKind::kSelect) &&
        uses_var(e, vector_loop_var_)) {
      for (size_t i = 0; i < vector_operands_.size(); ++i)
        if (structural_equal(vector_operands_[i], e)) {
          if (i < inline_operand_loads_.size() && !inline_operand_loads_[i].empty())
            return {inline_operand_loads_[i], kPrimary, true};
          return {"ingot_v" + std::to_string(i), kPrimary, true};
        }
      fail("vector operand " + to_string(e) + " was not loaded before its use");
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        auto* n = e.as<IntImmNode>();
        if (n->dtype == DType::kBool) return {n->value ? "true" : "false", kPrimary, true};
        if (n->value == std::numeric_limits<int64_t>::min()) return {"(-9223372036854775807 - 1)", kPrimary, true};
        bool fits_int =
            n->value >= std::numeric_limits<int32_t>::min() && n->value <= std::numeric_limits<int32_t>::max();
        bool exact = n->dtype == DType::kInt32 || !fits_int;
        return {std::to_string(n->value), n->value < 0 ? kUnary : kPrimary, exact};
      }
      case ExprKind::kFloatImm: {
        auto* n = e.as<FloatImmNode>();
        require_supported(n->dtype, e);
        std::string text = float_literal(n->value);
        return {text, text[0] == '-' ? kUnary : kPrimary, true};
      }
      case ExprKind::kVar: {
        const std::string& name = e.as<VarNode>()->name;
        auto it = bound_vars_.find(name);
        if (it == bound_vars_.end() || it->second == 0)
          fail("variable '" + name + "' is used outside any loop that binds it");
        return {names_.loop_var(name), kPrimary, e.dtype() == DType::kInt64};
      }
      case ExprKind::kBinary: return binary_code(e);
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        require_supported(n->a.dtype(), e);
        int p = (n->op == CompareOp::kEQ || n->op == CompareOp::kNE) ? kEquality : kRelational;
        const char* op = n->op == CompareOp::kEQ ? "==" : n->op == CompareOp::kNE ? "!=" : compare_op_name(n->op);
        return {wrap(expr(n->a), p + 1) + " " + op + " " + wrap(expr(n->b), p + 1), p, true};
      }
      case ExprKind::kLogical: {
        auto* n = e.as<LogicalNode>();
        bool is_and = n->op == LogicalOp::kAnd;
        int p = is_and ? kLogicalAnd : kLogicalOr;
        // Always parenthesize nested logical operators: mixing && and || unparenthesized invites misreading.
        return {wrap(expr(n->a), p + 1) + (is_and ? " && " : " || ") + wrap(expr(n->b), p + 1), p, true};
      }
      case ExprKind::kNot: return {"!" + wrap(expr(e.as<NotNode>()->a), kUnary), kUnary, true};
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        require_supported(n->dtype, e);
        Code t = expr(n->true_value), f = expr(n->false_value);
        bool exact = t.exact_type || f.exact_type;
        std::string tt = wrap(t, kTernary + 1);
        if (n->dtype == DType::kInt64 && !exact) {
          tt = "int64_t(" + t.text + ")";
          exact = true;
        }
        return {wrap(expr(n->cond), kTernary + 1) + " ? " + tt + " : " + wrap(f, kTernary + 1), kTernary, exact};
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        if (n->dtype == DType::kFloat32 && n->value.dtype() == DType::kBFloat16)
          return use_helper(Helper::kBf16ToF32, DType::kFloat32, {n->value});
        if (n->dtype == DType::kBFloat16 && n->value.dtype() == DType::kFloat32)
          return use_helper(Helper::kF32ToBf16, DType::kFloat32, {n->value});
        require_supported(n->dtype, e);
        require_supported(n->value.dtype(), e);
        std::string to = value_type(n->dtype, "");
        return {to + "(" + expr(n->value).text + ")", kPrimary, true};
      }
      case ExprKind::kCall: return call_code(e.as<CallNode>(), e);
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        if (accumulator_ && n->buffer->name == accumulator_->buffer->name &&
            structural_equal(n->index, accumulator_->index))
          return {accumulator_name_, kPrimary, true};
        for (const auto& [load, name] : hoisted_loads_)
          if (structural_equal(load, e)) return {name, kPrimary, true};
        const BufferInfo& info = lookup(n->buffer);
        return {info.c_name + "[" + index_code(n->index) + "]", kPrimary, true};
      }
      case ExprKind::kTensorRead: fail("tensor read " + to_string(e) + " in loop IR (lowering must replace it)");
      case ExprKind::kReduce: fail("reduction " + to_string(e) + " in loop IR (lowering must replace it)");
    }
    fail("unknown expression kind");
  }

  std::string index_code(const Expr& index) {
    if (!is_int(index.dtype())) fail("non-integer index " + to_string(index));
    return expr(index).text;
  }

  Code call_code(const CallNode* n, const Expr& e) {
    DType t = n->dtype;
    if (n->func == MathFunc::kAbs && is_int(t)) return use_helper(Helper::kAbs, t, n->args);
    require_supported(t, e);
    if (t != DType::kFloat32) fail("math function " + to_string(e) + " needs an f32 argument");
    Code arg = expr(n->args[0]);
    const std::string& x = arg.text;
    if (in_vector_map(e)) {
      switch (n->func) {
        case MathFunc::kExp: return {map_helper("exp") + "(" + x + ")", kPrimary, true};
        case MathFunc::kTanh: return {map_helper("tanh") + "(" + x + ")", kPrimary, true};
        case MathFunc::kSigmoid:
          return {"1.0f / (1.0f + " + map_helper("exp") + "(-" + wrap(arg, kPrimary) + "))", kMultiplicative, true};
        default: fail("math function " + to_string(e) + " in a vector map");
      }
    }
    // A one-argument helper called on the argument printed above (not printed again); tanh's definition calls exp's.
    auto helper_call = [&](Helper h, const std::string& argument) -> std::string {
      helpers_.insert({h, t});
      if (h == Helper::kTanh) helpers_.insert({Helper::kExp, t});
      return helper_name(h, t) + "(" + argument + ")";
    };
    switch (n->func) {
      case MathFunc::kExp: return {helper_call(Helper::kExp, x), kPrimary, true};
      case MathFunc::kLog: vector_math_.insert("logf"); return {"logf(" + x + ")"};
      case MathFunc::kTanh: return {helper_call(Helper::kTanh, x), kPrimary, true};
      case MathFunc::kSigmoid:
        return {"1.0f / (1.0f + " + helper_call(Helper::kExp, "-" + wrap(arg, kPrimary)) + ")", kMultiplicative, true};
      case MathFunc::kSqrt: return {"sqrtf(" + x + ")"};
      case MathFunc::kRsqrt: return {"1.0f / sqrtf(" + x + ")", kMultiplicative, true};
      case MathFunc::kErf: return {helper_call(Helper::kErf, x), kPrimary, true};
      case MathFunc::kPow: return {"powf(" + x + ", " + expr(n->args[1]).text + ")"};
      case MathFunc::kAbs: return {"fabsf(" + x + ")"};
    }
    fail("unknown math function");
  }

  // Whether e is a vector inside a vector map's value (it moves with the map's loop).
  bool in_vector_map(const Expr& e) const { return vector_map_ && uses_var(e, vector_loop_var_); }

  // A vector map's helper of the program's width: ingot_<what>_f32x16 or ingot_<what>_f32x8.
  std::string map_helper(const std::string& what) const {
    return "ingot_" + what + "_f32x" + std::to_string(map_lanes_);
  }

  // e as a vector for a helper's argument: the vector where it moves with the loop, else its value broadcast.
  std::string vector_text(const Expr& e) {
    return in_vector_map(e) ? expr(e).text : map_helper("splat") + "(" + expr(e).text + ")";
  }

  // ---- Statements -----------------------------------------------------------------------------------------

  // Binds a loop variable for the duration of its loop body, and keeps the loop on the stack of enclosing loops.
  struct VarScope {
    CppPrinter& p;
    const ForNode* loop;
    VarScope(CppPrinter& printer, const ForNode* l) : p(printer), loop(l) {
      ++p.bound_vars_[loop->name()];
      p.enclosing_loops_.push_back(loop);
    }
    ~VarScope() {
      --p.bound_vars_[loop->name()];
      // Scopes held in a vector may end in either order.
      auto it = std::find(p.enclosing_loops_.rbegin(), p.enclosing_loops_.rend(), loop);
      if (it != p.enclosing_loops_.rend()) p.enclosing_loops_.erase(std::next(it).base());
    }
  };

  // The loop runs to its extent, or to `end` (C++ text) when given.
  std::string for_header(const ForNode* loop, const std::string& end = "") {
    std::string v = names_.loop_var(loop->name());
    if (loop->var.dtype() != DType::kInt64) fail("loop variable '" + loop->name() + "' must be i64");
    return "for (int64_t " + v + " = 0; " + v + " < " + (end.empty() ? std::to_string(loop->extent) : end) + "; ++" +
           v + ") {";
  }

  // A loop whose guard bounds its variable (lower/guard_bound.h) ends where the guard would fail: g++ vectorizes the
  // shorter loop whole, where it cannot mask a load the lanes share, a strided access or a math call. The rest of the
  // guard goes around the loop when it does not depend on the loop's variable: g++ 12 only moves such a test out of
  // a small loop itself (an inline exp made the body too large, and the loop stayed scalar: 'no vectype for
  // MASK_LOAD').
  static bool guard_rest_outside(const ForNode* loop, const std::optional<GuardBound>& bound) {
    return bound && bound->remaining && !uses_var(bound->remaining, loop->name());
  }

  void print_bounded_loop(const ForNode* loop, const GuardBound& bound) {
    Expr end = int_imm(loop->extent);
    for (const Expr& limit : bound.limits) end = minimum(end, limit);
    const bool rest_outside = guard_rest_outside(loop, bound);  // printed around the loop's pragmas by the caller
    open(for_header(loop, expr(end).text));
    VarScope scope(*this, loop);
    if (bound.remaining && !rest_outside) {
      open("if (" + expr(bound.remaining).text + ") {");
      print_serial(bound.guard->then_case, true);
      close();
    } else {
      print_serial(bound.guard->then_case, true);
    }
    close();
  }

  // The body of an allocation: a thread-private array declared where the Allocate is, freed at its end.
  void print_allocate(const AllocateNode* n, bool own_block, const std::function<void(const Stmt&)>& body) {
    const Buffer& b = n->buffer;
    if (b->scope == MemoryScope::kGlobal)
      fail("global buffer '" + b->name + "' is allocated inside the function; make it workspace instead");
    if (buffers_.count(b->name)) fail("allocation of '" + b->name + "' shadows another buffer of that name");
    const char* type = c_type(b->dtype, std::string(memory_scope_name(b->scope)) + " buffer '" + b->name + "'");
    std::string name = names_.buffer(b->name);
    int64_t count = b->num_elements();
    if (count <= 0) fail("buffer '" + b->name + "' has no elements");
    int64_t bytes = count * dtype_bytes(b->dtype);
    if (!own_block) open("{");
    buffers_[b->name] = {name, b->dtype};
    bool on_heap = bytes > kMaxStackArrayBytes;
    std::string storage = on_heap ? names_.heap_storage(b->name) : "";
    if (on_heap) {
      // malloc and round up by hand: std::aligned_alloc is missing from some C++ libraries' <cstdlib>.
      emit("void* " + storage + " = std::malloc(" + std::to_string(bytes + 63) + ");");
      emit("if (!" + storage + ") std::abort();");
      emit(std::string(type) + "* __restrict__ " + name + " = reinterpret_cast<" + type +
           "*>((reinterpret_cast<uintptr_t>(" + storage + ") + 63) & ~uintptr_t(63));");
    } else {
      emit(std::string("alignas(64) ") + type + " " + name + "[" + std::to_string(count) + "];");
    }
    body(n->body);
    if (on_heap) emit("std::free(" + storage + ");");
    buffers_.erase(b->name);
    if (!own_block) close();
  }

  // Code that one thread runs: a stage under `omp single`, or the body of a parallel loop.
  void print_serial(const Stmt& s, bool own_block = false) {
    switch (s->kind) {
      case StmtKind::kSeq: {
        const auto& stmts = as<SeqNode>(s)->stmts;
        for (size_t i = 0; i < stmts.size(); ++i)
          if (i + 1 < stmts.size() && print_tile_from_zeros(stmts[i], stmts[i + 1]))
            ++i;
          else
            print_serial(stmts[i]);
        return;
      }
      case StmtKind::kStore: {
        auto* n = as<StoreNode>(s);
        const BufferInfo& info = lookup(n->buffer);
        emit(info.c_name + "[" + index_code(n->index) + "] = " + expr(n->value).text + ";");
        return;
      }
      case StmtKind::kAllocate:
        print_allocate(as<AllocateNode>(s), own_block, [&](const Stmt& b) { print_serial(b, own_block); });
        return;
      case StmtKind::kIfThenElse: {
        auto* n = as<IfThenElseNode>(s);
        open("if (" + expr(n->cond).text + ") {");
        print_serial(n->then_case, true);
        if (n->else_case) {
          close("} else {");
          ++indent_;
          print_serial(n->else_case, true);
        }
        close();
        return;
      }
      case StmtKind::kBarrier:
        if (as<BarrierNode>(s)->barrier_kind != BarrierKind::kBlock)
          fail(std::string(barrier_kind_name(as<BarrierNode>(s)->barrier_kind)) +
               " barrier inside a loop or condition of function '" + f_.name +
               "' (grid and kernel barriers may only separate top-level stages)");
        return;  // shared memory is per thread on the CPU, so a block barrier has nothing to order
      case StmtKind::kPrefetch:
        fail("prefetch of '" + as<PrefetchNode>(s)->buffer->name + "' inside a loop or condition of function '" +
             f_.name + "' (prefetches may only separate top-level stages)");
      case StmtKind::kFor: {
        auto* loop = as<ForNode>(s);
        if (loop->loop_kind == LoopKind::kSerial && !printing_spatial_fallback_)
          if (std::optional<SpatialTile> tile = explicit_spatial_tile(s)) return print_spatial_tile(s, *tile);
        if (!printing_vector_map_fallback_ && safe_to_simd(loop)) {
          if (std::optional<VectorMap> map = vector_map(loop)) return print_vector_map(s, loop, *map);
          if (std::optional<PairMap> map = pair_map(loop)) return print_pair_map(s, loop, *map);
        }
        if (const SelectNode* choice = invariant_choice(loop)) return print_unswitched_choice(loop, choice);
        bool simd = false;
        const std::optional<GuardBound> bound = guard_bound(loop);
        const bool rest_outside = guard_rest_outside(loop, bound);
        if (rest_outside) open("if (" + expr(bound->remaining).text + ") {");
        int first = int(body_.size());
        size_t hoisted = hoisted_loads_.size();
        if (loop->loop_kind == LoopKind::kVectorized) {
          if (safe_to_simd(loop)) {
            hoist_invariant_call_operands(loop);
            first = int(body_.size());
            emit("#pragma omp simd");
            simd = true;
          } else if (std::optional<SimdReduction> r = simd_reduction(loop)) {
            if (loop->explicit_lanes > 0) {
              std::optional<std::vector<Expr>> terms = vector_terms(loop, *r, loop->explicit_lanes);
              if (!terms) fail("loop '" + loop->name() + "' is marked explicit but holds no vector register tile");
              const bool bf16 = bf16_vector_terms(*terms, loop->name());
              emit(bf16 ? kBf16Guard : isa_guard(vector_width(loop)));
              if (bf16)
                print_bf16_vector_reduction(loop, *r, *terms);
              else
                print_vector_reduction(loop, *r, *terms);
              emit("#else");
              size_t reported = vectorized_body_lines_.size();
              print_simd_reduction(loop, *r);
              vectorized_body_lines_.resize(reported);  // not compiled where the vectors' ISA is
              emit("#endif");
            } else {
              print_simd_reduction(loop, *r);
            }
            return;
          } else {
            emit("// not marked simd: a store in this loop does not depend on '" + loop->name() + "'");
          }
        } else if (printed_unrolled(loop)) {
          int64_t factor = unroll_factor(loop);
          if (factor > 1 || loop->extent == 1)
            emit("#pragma GCC unroll " + std::to_string(std::min<int64_t>(factor, 65534)));
        }
        if (bound) {
          print_bounded_loop(loop, *bound);
        } else {
          open(for_header(loop));
          VarScope scope(*this, loop);
          print_serial(loop->body, true);
          close();
        }
        if (simd) vectorized_body_lines_.push_back({first, int(body_.size()) - 1});
        if (hoisted_loads_.size() > hoisted) {
          hoisted_loads_.resize(hoisted);
          close();
        }
        if (rest_outside) close();
        return;
      }
    }
  }

  // A vector map (lower/vector_maps.h) as explicit vectors of map_lanes_ (AVX-512's 16, or AVX2's 8 in a program whose
  // register tiles are AVX2's): whole vectors, then the rest of the row as one masked vector; the `omp simd` loop where
  // that ISA is not. g++ vectorizes the scalar exp's bit tricks into about 25 instructions a vector and runs the tail
  // of a short row (the 49th pixel of a 7 x 7 map) as scalar code; with AVX-512 2^n is one vscalefps here. A SiLU over
  // 16384 floats in L1, one core of a Zen 5: 0.124 ns an element against 0.183 with the scalar helper under `omp simd`;
  // EfficientNet's exported program ran 1.0 ms of its 7.6 (one thread) in exp.
  void print_vector_map(const Stmt& s, const ForNode* loop, const VectorMap& map) {
    vector_maps_ = true;
    print_in_vectors(s, loop, map_lanes_, isa_guard(map_lanes_), map.guard,
                     [&](int64_t lanes) { print_vector_map_step(loop, map, lanes); });
  }

  // Loop s (`loop`) under `isa_if` as whole vectors of `lanes` (step(0) each), then the rest of its extent as one step
  // of the first lanes (step(rest)), inside `guard` where one is given; the loop as it is (plain or `omp simd`) in the
  // #else.
  void print_in_vectors(const Stmt& s, const ForNode* loop, int64_t lanes, const std::string& isa_if, const Expr& guard,
                        const std::function<void(int64_t)>& step) {
    emit(isa_if);
    if (guard) open("if (" + expr(guard).text + ") {");
    {
      VarScope scope(*this, loop);
      const std::string i = names_.loop_var(loop->name());
      const int64_t whole = loop->extent / lanes * lanes, rest = loop->extent - whole;
      if (whole > 0) {
        open("for (int64_t " + i + " = 0; " + i + " < " + std::to_string(whole) + "; " + i +
             " += " + std::to_string(lanes) + ") {");
        step(0);
        close();
      }
      if (rest > 0) {
        open("{");
        emit("const int64_t " + i + " = " + std::to_string(whole) + ";");
        step(rest);
        close();
      }
    }
    if (guard) close();
    emit("#else");
    printing_vector_map_fallback_ = true;
    print_serial(s);
    printing_vector_map_fallback_ = false;
    emit("#endif");
  }

  // One vector of a map at its loop variable's value: each moving load once, the value, the store; all lanes, or
  // the first `lanes`.
  void print_vector_map_step(const ForNode* loop, const VectorMap& map, int64_t lanes) {
    auto address = [&](const Buffer& b, const Expr& index) {
      return "&" + lookup(b).c_name + "[" + index_code(index) + "]";
    };
    vector_operands_ = map.lane_loads;
    for (size_t n = 0; n < vector_operands_.size(); ++n) {
      auto* load = vector_operands_[n].as<BufferLoadNode>();
      const std::string at = address(load->buffer, load->index);
      emit("const ingot_f32x" + std::to_string(map_lanes_) + " ingot_v" + std::to_string(n) + " = " +
           (lanes == 0 ? map_helper("load") + "(" + at + ")"
                       : map_helper("load_first") + "(" + std::to_string(lanes) + ", " + at + ")") +
           ";");
    }
    vector_loop_var_ = loop->name();
    vector_map_ = true;
    const std::string value = expr(map.store->value).text;
    vector_map_ = false;
    vector_loop_var_.clear();
    const std::string at = address(map.store->buffer, map.store->index);
    if (map.store_step != 1) {
      scattering_vector_maps_ = true;
      const std::string step = std::to_string(map.store_step);
      emit(lanes == 0 ? map_helper("store_strided") + "(" + at + ", " + step + ", " + value + ");"
                      : map_helper("store_first_strided") + "(" + std::to_string(lanes) + ", " + at + ", " + step +
                            ", " + value + ");");
      return;
    }
    emit(lanes == 0 ? map_helper("store") + "(" + at + ", " + value + ");"
                    : map_helper("store_first") + "(" + std::to_string(lanes) + ", " + at + ", " + value + ");");
  }

  // A pair map (lower/vector_maps.h) with AVX-512 BF16: 16 pixels of both rows a step, rounded together by
  // vcvtne2ps2bf16 and interleaved into 16 pairs (one 64-byte store), the rest of the row masked; the plain loops
  // (each element through ingot_f32_to_bf16) where AVX-512 BF16 is not. ResNeXt's 1024-channel pairs of a 14 x 14 map,
  // alone in cache (2 threads, Intel Xeon VM with AMX): 18 us so against 7.1 us.
  void print_pair_map(const Stmt& s, const ForNode* loop, const PairMap& map) {
    pair_maps_ = true;
    const Expr first_pair = simplify(substitute(map.store->index, {{map.pair_loop->name(), Expr(int64_t(0))}}));
    print_in_vectors(s, loop, kAvx512VectorLanes, kBf16Guard, Expr(), [&](int64_t lanes) {
      const std::string mask = lanes == 0 ? "" : "(__mmask16)((1u << " + std::to_string(lanes) + ") - 1u), ";
      std::vector<std::string> rows;
      for (const Expr& value : map.values) {
        const SelectNode* choice = value.as<SelectNode>();
        auto* load = (choice ? choice->true_value : value).as<BufferLoadNode>();
        const std::string at = "&" + lookup(load->buffer).c_name + "[" + index_code(load->index) + "]";
        const std::string row = lanes == 0 ? "_mm512_loadu_ps(" + at + ")" : "_mm512_maskz_loadu_ps(" + mask + at + ")";
        rows.push_back(choice ? "(" + expr(choice->cond).text + ") ? " + row + " : _mm512_setzero_ps()" : row);
      }
      const std::string at = "&" + lookup(map.store->buffer).c_name + "[" + index_code(first_pair) + "]";
      emit(lanes == 0 ? "ingot_store_bf16_pairs(" + at + ", " + rows[0] + ", " + rows[1] + ");"
                      : "ingot_store_first_bf16_pairs(" + std::to_string(lanes) + ", " + at + ", " + rows[0] + ", " +
                            rows[1] + ");");
    });
  }

  // A vectorized loop whose one store chooses its value by a condition that does not move with the loop (a sequence
  // output stacked from per-step tensors: ONNX LSTM's Y, a balanced tree of selects on the step): g++ if-converts the
  // selects into blends and loads every branch in every iteration, 100 loads per vector for the paper LSTM's Y. Such a
  // loop prints as an if/else around one loop per branch, each of which then loads only its own. Trees of up to
  // kMaxUnswitchedLoops branches; nullptr for any other loop.
  static constexpr int64_t kMaxUnswitchedLoops = 256;
  static const SelectNode* invariant_choice(const ForNode* loop) {
    if (loop->loop_kind != LoopKind::kVectorized || loop->explicit_lanes > 0 || !safe_to_simd(loop)) return nullptr;
    auto* store = as<StoreNode>(single_statement(loop->body));
    if (!store) return nullptr;
    auto* choice = store->value.as<SelectNode>();
    if (!choice || uses_var(choice->cond, loop->name())) return nullptr;
    std::function<int64_t(const Expr&)> leaves = [&](const Expr& e) -> int64_t {
      auto* s = e.as<SelectNode>();
      if (!s || uses_var(s->cond, loop->name())) return 1;
      return leaves(s->true_value) + leaves(s->false_value);
    };
    return leaves(store->value) <= kMaxUnswitchedLoops ? choice : nullptr;
  }

  void print_unswitched_choice(const ForNode* loop, const SelectNode* choice) {
    auto* store = as<StoreNode>(single_statement(loop->body));
    auto loop_of = [&](const Expr& value) {
      return for_loop(loop->var, loop->extent, loop->loop_kind, ingot::store(store->buffer, store->index, value));
    };
    open("if (" + expr(choice->cond).text + ") {");
    print_serial(loop_of(choice->true_value));
    close("} else {");
    ++indent_;
    print_serial(loop_of(choice->false_value));
    close();
  }

  // g++ 12 leaves a simd loop that calls a math function (a libmvec clone: logf, and expf before it was a helper)
  // scalar when it also reads an element that does not move with the loop and that it cannot prove the loop's store
  // leaves alone ("latch block not empty"): softmax's exp(x - max[row]) in Swin's window attention called scalar
  // expf, 29% of the attention's time. Such loads are read once into a const before the loop (in a block of their
  // own). Only loads of buffers the loop does not store, in a loop of one store, outside selects (a select's branch
  // may guard the load's bounds).
  void hoist_invariant_call_operands(const ForNode* loop) {
    auto* store = as<StoreNode>(single_statement(loop->body));
    if (!store) return;
    bool calls = false;
    for_each_node(store->value, [&](const Expr& e) { calls |= e.kind() == ExprKind::kCall; });
    if (!calls) return;
    std::vector<Expr> loads;
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      switch (e.kind()) {
        case ExprKind::kBufferLoad: {
          auto* n = e.as<BufferLoadNode>();
          if (n->buffer->name != store->buffer->name && !uses_var(n->index, loop->name())) distinct_index(loads, e);
          return;
        }
        case ExprKind::kBinary: visit(e.as<BinaryNode>()->a), visit(e.as<BinaryNode>()->b); return;
        case ExprKind::kCast: visit(e.as<CastNode>()->value); return;
        case ExprKind::kCall:
          for (const Expr& a : e.as<CallNode>()->args) visit(a);
          return;
        default: return;  // selects, comparisons and constants hoist nothing
      }
    };
    visit(store->value);
    if (loads.empty()) return;
    open("{");
    for (const Expr& load : loads) {
      std::string name = "ingot_invariant" + std::to_string(hoisted_load_count_++);
      emit("const " + std::string(value_type(load.dtype(), "")) + " " + name + " = " + expr(load).text + ";");
      hoisted_loads_.push_back({load, name});
    }
  }

  // `#pragma GCC unroll` copies a body as often as the unrolled loops around it multiply, and g++'s time grows with
  // the copies: sampled 512^3 matmul schedules with 256 copies compiled in 26 s, with 1024 (a 256-iteration unrolled
  // loop around a 4-iteration one) in 22-54 s, and with 8192 ran past the 300 s limit. So the unrolled loops along
  // one path make at most kMaxUnrolledCopies copies: the innermost keep their whole unroll (register tiles are
  // innermost), and loops further out unroll by what is left, in part (a smaller factor) or not at all (no pragma).
  // Unrolled loops that print as no loop (inside a register tile's reduction) still count, which only errs towards
  // fewer copies.
  static constexpr int64_t kMaxUnrolledCopies = 64;

  static bool printed_unrolled(const ForNode* loop) {
    return loop->loop_kind == LoopKind::kUnrolled && !holds_simd_reduction(loop->body);
  }

  static int64_t unroll_factor(const ForNode* loop) { return unroll_factor(loop->extent, unrolled_copies(loop->body)); }

  static int64_t unroll_factor(int64_t extent, int64_t copies_inside) {
    return std::max<int64_t>(1, std::min<int64_t>(extent, kMaxUnrolledCopies / copies_inside));
  }

  // The most copies of one statement that the unroll pragmas printed inside s make.
  static int64_t unrolled_copies(const Stmt& s) {
    if (auto* seq = as<SeqNode>(s)) {
      int64_t most = 1;
      for (const Stmt& c : seq->stmts) most = std::max(most, unrolled_copies(c));
      return most;
    }
    if (auto* loop = as<ForNode>(s)) {
      int64_t inside = unrolled_copies(loop->body);
      return printed_unrolled(loop) ? inside * unroll_factor(loop->extent, inside) : inside;
    }
    if (auto* a = as<AllocateNode>(s)) return unrolled_copies(a->body);
    if (auto* branch = as<IfThenElseNode>(s))
      return std::max(unrolled_copies(branch->then_case), branch->else_case ? unrolled_copies(branch->else_case) : 1);
    return 1;
  }

  // g++ 12 unrolls a `#pragma GCC unroll` loop before it vectorizes, and leaves every copy of an `omp simd
  // reduction` loop inside it scalar: a BERT FFN schedule with a 768-long vectorized reduction under two unrolled
  // loops ran at 3 GFLOP/s. Such a loop is printed without the pragma (the compiler still may unroll it).
  static bool holds_simd_reduction(const Stmt& body) {
    bool found = false;
    for_each_stmt(body, [&](const Stmt& s) {
      auto* loop = as<ForNode>(s);
      found = found || (loop && loop->loop_kind == LoopKind::kVectorized && loop->extent > 1 && !safe_to_simd(loop) &&
                        simd_reduction(loop).has_value());
    });
    return found;
  }

  void print_simd_reduction(const ForNode* loop, const SimdReduction& r) {
    const char* type =
        c_type(as<StoreNode>(r.folds[0])->buffer->dtype, "buffer '" + as<StoreNode>(r.folds[0])->buffer->name + "'");
    auto accumulator = [&](size_t n) {
      return r.folds.size() == 1 ? std::string("ingot_acc") : "ingot_acc" + std::to_string(n);
    };
    open_outer_guard(r);
    std::string names;
    for (size_t n = 0; n < r.folds.size(); ++n) {
      emit(std::string(type) + " " + accumulator(n) + " = " + fold_element(r.folds[n]) + ";");
      names += (n ? ", " : "") + accumulator(n);
    }
    int first = int(body_.size());
    emit(std::string("#pragma omp simd reduction(") + r.op + ":" + names + ")");
    open(for_header(loop));
    {
      VarScope scope(*this, loop);
      if (!r.iteration_guard.empty()) open("if (" + expr(conjunction(r.iteration_guard)).text + ") {");
      for (size_t n = 0; n < r.folds.size(); ++n) {
        accumulator_ = as<StoreNode>(r.folds[n]);
        accumulator_name_ = accumulator(n);
        emit(accumulator(n) + " = " + expr(accumulator_->value).text + ";");
      }
      accumulator_ = nullptr;
      if (!r.iteration_guard.empty()) close();
    }
    close();
    vectorized_body_lines_.push_back({first, int(body_.size()) - 1});
    for (size_t n = 0; n < r.folds.size(); ++n) emit(fold_element(r.folds[n]) + " = " + accumulator(n) + ";");
    close();
  }

  // The position of e among `known` (distinct expressions), appended when it is not there yet.
  static size_t distinct_index(std::vector<Expr>& known, const Expr& e) {
    size_t i = 0;
    while (i < known.size() && !structural_equal(known[i], e)) ++i;
    if (i == known.size()) known.push_back(e);
    return i;
  }

  static Expr conjunction(const std::vector<Expr>& conds) {
    Expr e = conds[0];
    for (size_t n = 1; n < conds.size(); ++n) e = logical_and(e, conds[n]);
    return e;
  }

  // A reduction's block, under the guards that do not move with its loop (a split's tail of the folds' elements).
  void open_outer_guard(const SimdReduction& r) {
    open(r.outer_guard.empty() ? std::string("{") : "if (" + expr(conjunction(r.outer_guard)).text + ") {");
  }

  // A fold's element as C++ text: acc[i].
  std::string fold_element(const Stmt& fold) {
    auto* store = as<StoreNode>(fold);
    return lookup(store->buffer).c_name + "[" + index_code(store->index) + "]";
  }

  // After an explicit-vector reduction's vector steps (k the loop variable's C name, at the first element they did
  // not take): each fold's vector accumulator summed across its lanes into its element's value, the remaining
  // iterations one element at a time, and the elements stored.
  void print_reduction_tail(const std::string& k, const std::string& extent, const SimdReduction& r,
                            const std::vector<Expr>& terms) {
    // Four accumulators at a time are summed together (ingot_sum4_f32xN): Swin's window attention sums 49 dot products
    // of 32 elements per query row, two FMAs each, and one sum at a time took more instructions than the FMAs.
    // A last group of two or three takes empty vectors for the rest.
    const size_t folds = r.folds.size(), grouped = folds % 4 == 1 ? folds - 1 : folds;
    auto vacc = [&](size_t n) { return n < folds ? "ingot_vacc" + std::to_string(n) : std::string("ingot_f32xN{}"); };
    for (size_t n = 0; n < folds; ++n) {
      const std::string acc = std::to_string(n);
      if (n >= grouped) {
        emit("float ingot_acc" + acc + " = " + fold_element(r.folds[n]) + " + ingot_sum_f32xN(ingot_vacc" + acc + ");");
        continue;
      }
      const std::string group = std::to_string(n / 4);
      if (n % 4 == 0) {
        emit("float ingot_sums" + group + "[4];");
        emit("ingot_sum4_f32xN(" + vacc(n) + ", " + vacc(n + 1) + ", " + vacc(n + 2) + ", " + vacc(n + 3) +
             ", ingot_sums" + group + ");");
      }
      emit("float ingot_acc" + acc + " = " + fold_element(r.folds[n]) + " + ingot_sums" + group + "[" +
           std::to_string(n % 4) + "];");
    }
    open("for (; " + k + " < " + extent + "; ++" + k + ") {");
    for (size_t n = 0; n < terms.size(); ++n)
      emit("ingot_acc" + std::to_string(n) + " = ingot_acc" + std::to_string(n) + " + " +
           wrap(expr(terms[n]), kAdditive + 1) + ";");
    close();
    for (size_t n = 0; n < r.folds.size(); ++n)
      emit(fold_element(r.folds[n]) + " = ingot_acc" + std::to_string(n) + ";");
  }

  // A register tile as explicit vectors (GCC vector extensions): one vector accumulator per fold, the loads of each
  // operand written once per iteration, then each accumulator summed across its lanes and the tail done in scalars.
  // With `omp simd reduction`, g++ kept one operand register and reloaded the others for every fold: a BERT FFN
  // GEMM's 4 x 4 tiles ran at 62 GFLOP/s that way and at 138 this way (2 cores, AVX-512).
  void print_vector_reduction(const ForNode* loop, const SimdReduction& r, const std::vector<Expr>& terms) {
    open_outer_guard(r);
    VarScope scope(*this, loop);
    const std::string k = names_.loop_var(loop->name()), extent = std::to_string(loop->extent);
    for (size_t n = 0; n < r.folds.size(); ++n) emit("ingot_f32xN ingot_vacc" + std::to_string(n) + " = {};");
    vector_operands_.clear();
    for (const Expr& term : terms) collect_lane_operands(term, loop->name(), vector_operands_);
    for (size_t i = 0; i < vector_operands_.size(); ++i) {
      auto* load = vector_operands_[i].as<BufferLoadNode>();
      Expr first = simplify(substitute(load->index, {{loop->name(), int_imm(0)}}));
      emit("const float* ingot_p" + std::to_string(i) + " = &" + lookup(load->buffer).c_name + "[" + index_code(first) +
           "];");
    }
    emit("int64_t " + k + " = 0;");
    open("for (; " + k + " + INGOT_F32_LANES <= " + extent + "; " + k + " += INGOT_F32_LANES) {");
    // Each operand is loaded once, into its own variable, before any fold uses it. Written inside the folds, g++
    // sometimes kept the loads there as memory operands of the FMAs and loaded a shared operand once per fold: a Swin
    // GEMM's 2 x 4 tile then issued 12 loads for 8 FMAs in one program and 7 in another. But where the accumulators
    // and the operands outnumber the vector registers (AVX2's 16: a GEMV tile of 8 rows reads 8 weight rows and x),
    // g++ kept an accumulator on the stack, stored and reloaded at every step: the LSTM's input projections ran 2.25x
    // slower with AVX2 than with AVX-512 on a Zen 4, whose FMAs peak alike. There an operand that one fold reads is
    // loaded inside that fold, so that it lives for one FMA (still a load of its own: ingot_load_f32xN's empty asm),
    // and only shared ones before.
    std::vector<int> folds_reading(vector_operands_.size(), 0);
    for (const Expr& term : terms) {
      std::vector<Expr> read;
      collect_lane_operands(term, loop->name(), read);
      for (const Expr& e : read)
        for (size_t i = 0; i < vector_operands_.size(); ++i)
          if (structural_equal(vector_operands_[i], e)) ++folds_reading[i];
    }
    const bool crowded = r.folds.size() + vector_operands_.size() > size_t(vector_registers(loop->explicit_lanes));
    inline_operand_loads_.assign(vector_operands_.size(), "");
    for (size_t i = 0; i < vector_operands_.size(); ++i) {
      const std::string load = "ingot_load_f32xN(ingot_p" + std::to_string(i) + " + " + k + ")";
      if (crowded && folds_reading[i] == 1)
        inline_operand_loads_[i] = load;
      else
        emit("const ingot_f32xN ingot_v" + std::to_string(i) + " = " + load + ";");
    }
    vector_loop_var_ = loop->name();
    for (size_t n = 0; n < terms.size(); ++n)
      emit("ingot_vacc" + std::to_string(n) + " += " + expr(terms[n]).text + ";");
    vector_loop_var_.clear();
    inline_operand_loads_.clear();
    close();
    print_reduction_tail(k, extent, r, terms);
    close();
  }

  // A vectorized reduction of bf16 products (bf16_vector_terms) with AVX-512 BF16: 32 iterations per step, each
  // operand's 32 bf16 loaded as they lie or converted from two f32 vectors (bf16(x)), and one vdpbf16ps per fold;
  // the tail one element at a time. A GEMV's weight rows then stream at 2 bytes an element.
  void print_bf16_vector_reduction(const ForNode* loop, const SimdReduction& r, const std::vector<Expr>& terms) {
    bf16_pair_tiles_ = true;
    vector_width(loop);
    open_outer_guard(r);
    VarScope scope(*this, loop);
    const std::string k = names_.loop_var(loop->name()), extent = std::to_string(loop->extent);
    for (size_t n = 0; n < r.folds.size(); ++n) emit("ingot_f32xN ingot_vacc" + std::to_string(n) + " = {};");
    // The bf16 values of the products, each once: f32(S) * f32(V) gives S and V.
    std::vector<Expr> operands;
    std::vector<std::pair<size_t, size_t>> uses;
    for (const Expr& term : terms) {
      auto* product = term.as<BinaryNode>();
      uses.emplace_back(distinct_index(operands, product->a.as<CastNode>()->value),
                        distinct_index(operands, product->b.as<CastNode>()->value));
    }
    std::vector<bool> from_f32(operands.size());
    for (size_t i = 0; i < operands.size(); ++i) {
      const BufferLoadNode* load = bf16_value_load(operands[i]);
      from_f32[i] = load->dtype == DType::kFloat32;
      Expr first = simplify(substitute(load->index, {{loop->name(), int_imm(0)}}));
      emit(std::string("const ") + (from_f32[i] ? "float" : "uint16_t") + "* ingot_p" + std::to_string(i) + " = &" +
           lookup(load->buffer).c_name + "[" + index_code(first) + "];");
    }
    emit("int64_t " + k + " = 0;");
    open("for (; " + k + " + 32 <= " + extent + "; " + k + " += 32) {");
    for (size_t i = 0; i < operands.size(); ++i) {
      const std::string p = "ingot_p" + std::to_string(i) + " + " + k;
      emit("const __m512i ingot_v" + std::to_string(i) + " = " +
           (from_f32[i] ? "(__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(" + p + " + 16), _mm512_loadu_ps(" + p + "))"
                        : "_mm512_loadu_si512(" + p + ")") +
           ";");
    }
    for (size_t n = 0; n < terms.size(); ++n)
      emit("ingot_vacc" + std::to_string(n) + " = (ingot_f32xN)_mm512_dpbf16_ps((__m512)ingot_vacc" +
           std::to_string(n) + ", (__m512bh)ingot_v" + std::to_string(uses[n].first) + ", (__m512bh)ingot_v" +
           std::to_string(uses[n].second) + ");");
    close();
    print_reduction_tail(k, extent, r, terms);
    close();
  }

  // A spatial register tile (SpatialTile) as explicit vectors where AVX-512 is, the loops as written elsewhere.
  // The accumulators are loaded before the reduction loops and stored after them; inside, each operand moving with
  // the vectorized loop is loaded once per iteration (masked to the chunk's lanes and, under a padded border, to the
  // lanes inside it: a masked load reads nothing outside them) and every accumulator takes its FMA.
  // The explicit forms are AVX-512's (zmm registers, 16-bit lane masks) and AVX2's (ymm registers, masks as vectors);
  // lowering refuses other lane counts. One program has vectors of one width: its helpers share their names.
  int64_t vector_width(const ForNode* loop) {
    const int64_t lanes = loop->explicit_lanes;
    if (!is_explicit_vector_width(lanes))
      fail("loop '" + loop->name() + "' asks for explicit vectors of " + std::to_string(lanes) +
           " lanes; the C++ printer writes 16-lane (AVX-512) and 8-lane (AVX2) vectors only");
    if (vector_lanes_ != 0 && vector_lanes_ != lanes)
      fail("loop '" + loop->name() + "' asks for explicit vectors of " + std::to_string(lanes) + " lanes where " +
           "function '" + f_.name + "' has vectors of " + std::to_string(vector_lanes_) +
           "; one program has one width");
    vector_lanes_ = lanes;
    return lanes;
  }

  // The preprocessor condition under which explicit vectors of that many lanes compile.
  static std::string isa_guard(int64_t lanes) {
    return lanes == kAvx512VectorLanes ? "#if defined(__AVX512F__)" : "#if defined(__AVX2__) && defined(__FMA__)";
  }

  // Lanes 0 .. lanes - 1 as the mask type of the vectors' ISA.
  static std::string lane_mask(int64_t vector_lanes, int64_t lanes) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%llX", static_cast<unsigned long long>((1u << lanes) - 1u));
    return std::string(vector_lanes == kAvx512VectorLanes ? "(__mmask16)" : "(ingot_mask)") + text;
  }

  // A load of lanes 0 .. lanes - 1 at `address`. AVX2 has no mask registers: its masked load takes a vector of lane
  // masks and costs more than a plain one, so a whole vector is loaded plainly.
  static std::string vector_load(int64_t vector_lanes, int64_t lanes, const std::string& address) {
    if (vector_lanes != kAvx512VectorLanes && lanes == vector_lanes) return "ingot_load_f32xN(" + address + ")";
    return "ingot_load_masked_f32xN(" + lane_mask(vector_lanes, lanes) + ", " + address + ")";
  }

  // The terms in row order when they form an outer product with more rows than operands (with AVX2: one that does not
  // fit the registers in operand order): each term reads one operand and its other factors (its row's scalar part) are
  // those of exactly as many terms as there are operands, one per operand. nullopt otherwise. Needs vector_loop_var_
  // set (the terms print their operands as ingot_vN).
  std::optional<std::vector<size_t>> outer_product_rows(const std::vector<Expr>& terms,
                                                        const std::vector<std::vector<size_t>>& uses, int64_t lanes) {
    const size_t operands = vector_operands_.size();
    if (operands < 2) return std::nullopt;
    static const std::regex operand_name("ingot_v[0-9]+");
    std::vector<std::string> row_keys;  // in order of first appearance
    std::map<std::string, std::vector<size_t>> rows;
    for (size_t n = 0; n < terms.size(); ++n) {
      if (uses[n].size() != 1) return std::nullopt;
      std::string key = std::regex_replace(expr(terms[n]).text, operand_name, "ingot_v");
      if (!rows.count(key)) row_keys.push_back(key);
      rows[key].push_back(n);
    }
    // Grouped by operand, the tile holds its accumulators, every row's broadcast and one operand. With AVX-512 row
    // order paid even where that fits (the paper ResNeXt's ONNX program 196 against 208-214 ms, two A/B rounds); with
    // AVX2's 16 registers it paid only where it does not (ResNeXt's AVX2 stencils, 4 rows x 2 operands in 13
    // registers, ran 5% slower row by row in one A/B round).
    const bool fits_by_operand = terms.size() + row_keys.size() + 1 <= size_t(vector_registers(lanes));
    if (row_keys.size() <= operands || (lanes == kAvx2VectorLanes && fits_by_operand)) return std::nullopt;
    std::vector<size_t> order;
    for (const std::string& key : row_keys) {
      std::set<size_t> seen;
      for (size_t n : rows[key]) seen.insert(uses[n][0]);
      if (rows[key].size() != operands || seen.size() != operands) return std::nullopt;
      order.insert(order.end(), rows[key].begin(), rows[key].end());
    }
    return order;
  }

  // With AVX2, an outer product whose accumulators, operands and one broadcast row element outnumber the 16 registers
  // (a channel tile of 2 vectors x 7 pixels: 14 + 2 + 1) reads the operands that do not fit from memory in each of
  // their FMAs (ingot_fma_from_memory), the rest stay loaded once: per term n of such an operand, its row's scalar
  // factor (the term is that factor times the operand); null elsewhere. Every term reads one operand
  // (outer_product_rows' precondition). Left to g++, the 2 x 7 channel tiles of
  // ResNeXt's 7 x 7 maps kept one accumulator on the stack, stored and reloaded at every step.
  std::vector<Expr> fmas_from_memory(const std::vector<Expr>& terms, const std::vector<std::vector<size_t>>& uses,
                                     const std::vector<std::string>& plain_operand_address, size_t accumulators,
                                     int64_t lanes) const {
    std::vector<Expr> scalars(terms.size());
    const size_t operands = vector_operands_.size(), registers = size_t(vector_registers(lanes));
    if (lanes != kAvx2VectorLanes || accumulators + operands + 1 <= registers || accumulators + 2 > registers)
      return scalars;
    const size_t kept = registers - 1 - accumulators;  // operands that stay in registers
    for (size_t i = kept; i < operands; ++i) {
      if (plain_operand_address[i].empty()) continue;
      std::vector<std::pair<size_t, Expr>> factors;
      bool products = true;
      for (size_t n = 0; n < terms.size(); ++n) {
        if (uses[n][0] != i) continue;
        auto* product = terms[n].as<BinaryNode>();
        products = product && product->op == BinaryOp::kMul;
        if (!products) break;
        const bool operand_first = structural_equal(product->a, vector_operands_[i]);
        const Expr& other = operand_first ? product->b : product->a;
        products =
            (operand_first || structural_equal(product->b, vector_operands_[i])) && !uses_var(other, vector_loop_var_);
        factors.emplace_back(n, other);
      }
      if (!products) continue;
      for (const auto& [n, factor] : factors) scalars[n] = factor;
    }
    return scalars;
  }

  // Calls `f` with each load of a tile's term (a sum of products of loads), in order.
  static void for_each_term_load(const Expr& e, const std::function<void(const BufferLoadNode*)>& f) {
    if (auto* b = e.as<BinaryNode>()) {
      for_each_term_load(b->a, f);
      for_each_term_load(b->b, f);
    } else if (auto* load = e.as<BufferLoadNode>()) {
      f(load);
    }
  }

  bool is_packed_input(const std::string& buffer) const {
    return std::any_of(f_.packed_inputs.begin(), f_.packed_inputs.end(),
                       [&](const PackedLayout& p) { return p.tensor == buffer; });
  }

  bool is_function_input(const std::string& buffer) const {
    for (const Buffer& b : f_.inputs)
      if (b->name == buffer) return true;
    return false;
  }

  // The operands of a spatial tile's long innermost reduction (64 steps or more; 256 for a row read one element per
  // step) that the hardware prefetchers do not keep up with, as addresses to prefetch at each step:
  // - Rows of a function input read one element per step (a 1 x 1 convolution's weight rows against a plane of
  //   pixels), kPrefetchAhead elements ahead. Such a row moves by a cache line every 16 steps, with its neighbours
  //   4 KB or more away: on a Zen 5 the hardware prefetchers left a ResNeXt layer whose weights came from DRAM 20%
  //   slower than with them in L3, and a prefetch per row and step took back most of that (1.52 -> 1.27 ms, 14 x 14
  //   x 1024 channels).
  // - Pixels read a line or more apart from one step to the next (a channel tile's few pixels of each input
  //   channel's plane), kStridedStepsAhead steps ahead: every line from the lowest to the highest element read.
  //   Each step of such a tile needs new lines of the map from L2 or beyond; on an Intel Xeon a 1024 -> 1024, 14 x 14
  //   convolution's channel tile (2 x 16 channels x 14 pixels) ran 1.11-1.17x faster with them (both forms called in
  //   turn in one process); 8 or 32 steps ahead instead of 16 made no difference (1.00-1.02x).
  // - A packed weight's panel, the vector operand of a channel tile or GEMM panel (a packed input whose lanes lie
  //   side by side, read without gaps from one step to the next, a line or more a step), kStridedStepsAhead * 2 steps
  //   ahead, a line per prefetch. The
  //   panel's first block of rows reads it from DRAM in a whole model: on an Intel Xeon a chain of twenty 1024 ->
  //   1024, 14 x 14 convolutions (80 MB of weights) ran 1.08-1.10x faster with them, ResNeXt 1.03-1.08x (both forms
  //   called in turn in one process).
  // - A map's rows that a plane tile loads as vectors, a plane apart from one step to the next (a 1 x 1 convolution's
  //   112 pixels of a 56 x 56 map: 7 lines, then 12.5 KB to the next input channel's), kMapStepsAhead steps ahead. A
  //   chain of eight 256 -> 256, 56 x 56 convolutions 1.05-1.07x, EfficientNet 1.02-1.03x, ResNeXt 1.01x, BERT (its
  //   attention-value product) 0.97-1.02x. A map read whole at each step is a stream the hardware follows.
  // Intermediate rows read in order are left to the hardware.
  std::vector<std::string> operands_to_prefetch(const SpatialTile& tile, const std::string& lanes) {
    constexpr int64_t kPrefetchAhead = 256;  // elements: 1 KB of f32, about 3600 cycles of a 4 x 7 tile's steps
    constexpr int64_t kMinReductionSteps = kPrefetchAhead;  // a shorter row would prefetch the next tile's rows
    constexpr int64_t kStridedStepsAhead = 16;  // about 200 cycles of a 28-FMA step: an L3 hit's latency and more
    constexpr int64_t kMinStridedSteps = 4 * kStridedStepsAhead;
    constexpr int64_t kMapStepsAhead = 8;  // 4, 8 and 16 alike (a chain of 56 x 56 convolutions, 1.05-1.07x)
    std::vector<std::string> addresses;
    auto innermost = tile.reduction.rbegin();  // loops of one iteration (a 1 x 1 kernel's taps) do not count
    while (innermost != tile.reduction.rend() && (*innermost)->extent == 1) ++innermost;
    if (innermost == tile.reduction.rend()) return addresses;
    const std::string& step = (*innermost)->name();
    const int64_t steps = (*innermost)->extent;
    auto add = [&](const Buffer& buffer, const Expr& index) {
      std::string address = "&" + lookup(buffer).c_name + "[" + index_code(simplify(index)) + "]";
      if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) addresses.push_back(address);
    };
    struct Strided {
      Buffer buffer;
      Expr first;              // the first element read at a step
      int64_t moves = 0;       // elements per step
      int64_t lo = 0, hi = 0;  // elements read, relative to first
      int64_t steps_ahead = 0;
      bool vector = false, panel = false;  // vector operands: a packed panel, else a map's rows
    };
    std::vector<Strided> strided;
    int64_t lanes_read = 0;  // by the accumulator whose term is visited: its chunk's
    auto visit = [&](const BufferLoadNode* load) {
      const int64_t moves = lane_step(load->index, step);
      const int64_t line_elements = 64 / dtype_bytes(load->buffer->dtype);
      Expr first = load->index;
      int64_t width = 1, steps_ahead = kStridedStepsAhead;
      const bool panel = is_packed_input(load->buffer->name), vector = uses_var(load->index, lanes);
      if (vector) {
        if (lane_step(load->index, lanes) != 1) return;
        first = simplify(substitute(load->index, {{lanes, int_imm(0)}}));
        width = lanes_read;
        steps_ahead = panel ? 2 * kStridedStepsAhead : kMapStepsAhead;
      }
      if (moves == 1 && !vector && steps >= kMinReductionSteps) {
        if (is_function_input(load->buffer->name)) add(load->buffer, load->index + kPrefetchAhead);
        return;
      }
      if (moves < line_elements || steps < kMinStridedSteps) return;
      for (Strided& s : strided) {
        if (s.buffer->name != load->buffer->name || s.moves != moves || s.vector != vector) continue;
        const Expr distance = simplify(first - s.first);
        if (auto* offset = distance.as<IntImmNode>(); offset && std::abs(offset->value) < moves) {
          s.lo = std::min(s.lo, offset->value);
          s.hi = std::max(s.hi, offset->value + width - 1);
          return;
        }
      }
      strided.push_back({load->buffer, first, moves, 0, width - 1, steps_ahead, vector, panel});
    };
    for (size_t n = 0; n < tile.terms.size(); ++n) {
      lanes_read = tile.lanes_of(n);
      for_each_term_load(tile.terms[n], visit);
    }
    for (const Strided& s : strided) {
      // A panel is read without gaps, and a map's rows with them (else they are a stream the hardware follows).
      if (s.vector && (s.hi - s.lo + 1 == s.moves) != s.panel) continue;
      const int64_t line_elements = 64 / dtype_bytes(s.buffer->dtype);
      const Expr ahead = s.first + s.moves * s.steps_ahead;
      for (int64_t offset = s.lo; offset < s.hi; offset += line_elements) add(s.buffer, ahead + offset);
      // A broadcast row may straddle a line more; vectors that fill their lines start on one (a panel's; a map's row
      // blocks, when they are whole lines, lie a multiple of lines apart).
      if (!s.vector || (s.hi - s.lo + 1) % line_elements != 0) add(s.buffer, ahead + s.hi);
    }
    return addresses;
  }

  // A GEMM panel (a register tile whose vector operand is a packed weight: one contiguous panel per step of a parallel
  // loop, read again by every block of rows inside it) reads its panel from memory in the first block of rows, where
  // the steps need lines faster than DRAM gives them, and from L2 in the others. Each step of the innermost reduction
  // prefetches into L2 a share of the next panel instead, spread evenly over every block of rows and step, so that the
  // next panel arrives while this one is computed: at most a line a step, the address
  //   next panel + (step of the loops inside the parallel loop, counted as one) * panel bytes / steps.
  // In a whole model the weights come from DRAM: BERT's 340 MB pass through a cache that, on an Intel Xeon VM, kept
  // a 64 MB working set (2 threads read it at 56 GB/s) and not a 128 MB one (25 GB/s). There BERT's exported program
  // ran 1.12-1.18x faster with these prefetches and Swin's 1.06x (the two forms called in turn in one process), a 128
  // x 768 x 3072 GEMM 1.13x with its weight flushed before each call and 1.01-1.02x with it in cache. The last panel
  // of the loop prefetches itself.
  std::vector<std::string> next_panel_prefetches(const SpatialTile& tile, const std::string& lanes) {
    constexpr int64_t kMinPanelBytes = 4096;
    std::vector<std::string> statements;
    if (tile.bf16_pairs || tile.reduction.empty()) return statements;
    auto first_reduction = std::find(enclosing_loops_.begin(), enclosing_loops_.end(), tile.reduction.front());
    if (first_reduction == enclosing_loops_.end()) return statements;
    std::vector<const ForNode*> outer(enclosing_loops_.begin(), first_reduction);
    std::set<std::string> seen;
    auto visit = [&](const BufferLoadNode* load) {
      if (!uses_var(load->index, lanes) || !seen.insert(load->buffer->name).second) return;
      if (!is_function_input(load->buffer->name)) return;
      // The innermost parallel loop that moves the operand: one panel per step.
      auto panel_loop = outer.rend();
      for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
        if (!uses_var(load->index, (*it)->name())) continue;
        if (loop_is_parallel((*it)->loop_kind)) panel_loop = it;
        break;  // a serial loop around the tile that moves the operand: not a panel read again
      }
      if (panel_loop == outer.rend()) return;
      const ForNode* parallel = *panel_loop;
      const int64_t panel = lane_step(load->index, parallel->name());
      const int64_t element_bytes = dtype_bytes(load->buffer->dtype);
      // The panel holds everything the tile reads in one step of the parallel loop.
      const int64_t lane = lane_step(load->index, lanes);
      if (lane <= 0) return;
      int64_t footprint = lane * (tile.vector_lanes * tile.chunks - 1) + 1;
      for (const ForNode* r : tile.reduction) {
        const int64_t step = lane_step(load->index, r->name());
        if (step < 0 || (step == 0 && uses_var(load->index, r->name()))) return;
        footprint += step * (r->extent - 1);
      }
      if (panel <= 0 || footprint > panel || panel * element_bytes < kMinPanelBytes) return;
      Expr step = int_imm(0);
      int64_t steps = 1, rows = 1;
      for (auto it = panel_loop.base(); it != outer.end(); ++it) {
        if (loop_is_parallel((*it)->loop_kind)) return;  // the next step of the parallel loops is not the next panel
        step = step * (*it)->extent + var((*it)->name());
        steps *= (*it)->extent;
        rows *= (*it)->extent;
      }
      for (const ForNode* r : tile.reduction) {
        step = step * r->extent + var(r->name());
        steps *= r->extent;
      }
      const int64_t bytes = panel * element_bytes;
      if (rows < 2 || bytes > steps * 64) return;  // read once, or more than a line a step
      std::unordered_map<std::string, Expr> first{{lanes, int_imm(0)}};
      for (const ForNode* r : tile.reduction) first[r->name()] = int_imm(0);
      first[parallel->name()] = minimum(var(parallel->name()) + int64_t(1), int_imm(parallel->extent - 1));
      const std::string share = bytes % steps == 0 ? " * " + std::to_string(bytes / steps)
                                                   : " * " + std::to_string(bytes) + " / " + std::to_string(steps);
      statements.push_back("__builtin_prefetch(reinterpret_cast<const char*>(&" + lookup(load->buffer).c_name + "[" +
                           index_code(simplify(substitute(load->index, first))) + "]) + (" +
                           index_code(simplify(step)) + ")" + share + ", 0, 2);");
    };
    for (const Expr& term : tile.terms) for_each_term_load(term, visit);
    return statements;
  }

  // A stencil tile (its reduction runs over a window inside each step of its outermost loop: a grouped or depthwise
  // convolution's taps for each input channel) reads, at each outer step, a few rows of the map that the hardware
  // prefetchers do not see coming: the next channel's rows lie a whole plane away. In ResNeXt, where the map comes
  // from L3, the grouped 3 x 3 convolutions ran half as fast as alone (where it stays in L2), and a stride-2 one at
  // 32 GFLOP/s. At the top of each outer step this prefetches the lines the vector operands will read in the next
  // one, per buffer from the lowest to the highest element any of them reads there (at most kMaxLines lines).
  void print_next_operand_rows_prefetch(const SpatialTile& tile, const std::string& lanes) {
    constexpr int64_t kMaxLines = 64;
    const ForNode* outer = tile.reduction.front();
    if (outer->extent < 2 ||
        std::none_of(tile.reduction.begin() + 1, tile.reduction.end(), [](const ForNode* r) { return r->extent > 1; }))
      return;  // a plane tile's reduction is one loop: its operands stream in order
    std::unordered_map<std::string, Expr> first, last;  // an outer step's first and last elements read
    for (const ForNode* r : tile.reduction) {
      if (r == outer) continue;
      first[r->name()] = Expr(int64_t(0));
      last[r->name()] = Expr(int64_t(r->extent - 1));
    }
    first[lanes] = Expr(int64_t(0));
    last[lanes] = Expr(tile.lanes->extent - 1);
    struct Range {
      Buffer buffer;
      Expr base;  // the first operand's first element at the outer step
      int64_t lo = 0, hi = 0;
    };
    std::vector<Range> ranges;
    std::vector<Expr> operands;
    for (const Expr& term : tile.terms) collect_lane_operands(term, lanes, operands);
    for (const Expr& operand : operands) {
      const BufferLoadNode* load = operand.as<BufferLoadNode>();
      if (auto* sel = operand.as<SelectNode>()) load = sel->true_value.as<BufferLoadNode>();
      if (!load) continue;
      for (const ForNode* r : tile.reduction)
        if (lane_step(load->index, r->name()) < 0) return;
      if (lane_step(load->index, lanes) < 0) return;
      Expr low = simplify(substitute(load->index, first)), high = simplify(substitute(load->index, last));
      const Expr span = simplify(high - low);  // kept: as<> points into it
      auto* extent = span.as<IntImmNode>();
      if (!extent) return;
      auto same = std::find_if(ranges.begin(), ranges.end(),
                               [&](const Range& r) { return r.buffer->name == load->buffer->name; });
      if (same == ranges.end()) {
        ranges.push_back({load->buffer, low, 0, extent->value});
        continue;
      }
      const Expr distance = simplify(low - same->base);
      auto* offset = distance.as<IntImmNode>();
      if (!offset) return;
      same->lo = std::min(same->lo, offset->value);
      same->hi = std::max(same->hi, offset->value + extent->value);
    }
    const std::string step = names_.loop_var(outer->name());
    for (const Range& r : ranges) {
      const int64_t element = dtype_bytes(r.buffer->dtype), lines = ((r.hi - r.lo + 1) * element + 63) / 64 + 1;
      if (lines > kMaxLines) continue;
      const Expr next = simplify(substitute(r.base, {{outer->name(), var(outer->name()) + int64_t(1)}}) + r.lo);
      emit("if (" + step + " + 1 < " + std::to_string(outer->extent) + ")");
      emit("  for (int64_t ingot_line = 0; ingot_line < " + std::to_string(lines) + "; ++ingot_line)");
      emit("    __builtin_prefetch(reinterpret_cast<const char*>(&" + lookup(r.buffer).c_name + "[" + index_code(next) +
           "]) + ingot_line * 64);");
    }
  }

  // The `#else` branch of a spatial tile's explicit vectors: its loops as written, where the vectors' ISA is not.
  void print_spatial_fallback(const Stmt& s, const Stmt& zeros) {
    emit("#else");
    size_t reported = vectorized_body_lines_.size();
    printing_spatial_fallback_ = true;
    if (zeros != nullptr) print_serial(zeros);
    print_serial(s);
    printing_spatial_fallback_ = false;
    vectorized_body_lines_.resize(reported);  // not compiled where the vectors' ISA is
    emit("#endif");
  }

  // Code of e at the first lane of a spatial tile's vectorized loop; of a bf16 value's address there.
  std::string at_first_lane(const SpatialTile& tile, const Expr& e) {
    return index_code(simplify(substitute(e, {{tile.lanes->name(), Expr(int64_t(0))}})));
  }
  std::string bf16_value_address(const SpatialTile& tile, const Expr& bf16_value) {
    const BufferLoadNode* load = bf16_value_load(bf16_value);
    return "&" + lookup(load->buffer).c_name + "[" + at_first_lane(tile, load->index) + "]";
  }

  // A bf16 pair tile's operands: the distinct vector operands (a weight panel's pairs per chunk) and scalar operands
  // (a row's pair), and which of each accumulator n's term reads.
  struct PairOperands {
    std::vector<Expr> vectors, scalars;
    std::vector<size_t> vector_of, scalar_of;
    std::vector<int64_t> vector_lanes;  // per vector: the most lanes an accumulator reading it has
  };
  static PairOperands pair_operands(const SpatialTile& tile) {
    PairOperands o;
    o.vector_of.resize(tile.terms.size());
    o.scalar_of.resize(tile.terms.size());
    for (size_t n = 0; n < tile.terms.size(); ++n) {
      o.vector_of[n] = distinct_index(o.vectors, tile.pair_vectors[n]);
      o.vector_lanes.resize(o.vectors.size());
      o.vector_lanes[o.vector_of[n]] = std::max(o.vector_lanes[o.vector_of[n]], tile.lanes_of(n));
      o.scalar_of[n] = distinct_index(o.scalars, tile.pair_scalars[n]);
    }
    return o;
  }

  // A bf16 pair tile as AMX tiles (Sapphire Rapids' tdpbf16ps: a 16 x 32 bf16 tile times a 16 pairs x 16 columns one
  // into a 16 x 16 f32 one, about 20x the products per cycle of vdpbf16ps): the register tile's rows are the rows of
  // its accumulator tiles, one per chunk of columns, and each step of 32 k loads the rows' 32 k (rounded from f32 into
  // a bf16 buffer) as one tile and each chunk's 16 pairs of k as another, where
  // - the rows are the combos, one scalar operand each, at most 16 (or 32 in two tiles of rows that load in place,
  //   where the registers hold both tiles' accumulators: at most 2 chunks), and each chunk reads one vector operand and
  //   has 16 lanes, the last one 16 or fewer (at most 6 chunks of 16: 8 tile registers hold the chunks' accumulators,
  //   the rows and at least one weight tile; at most 5 with a last one of fewer lanes, whose weight tile is narrower);
  // - the accumulators lie a constant stride apart from row to row and 16 elements apart from chunk to chunk;
  // - the scalars move by one element per k, the vectors by a constant per pair of k, and the innermost reduction's
  //   extent is a multiple of 32.
  // Where the scalars are bf16 loads a constant apart from row to row (a 1 x 1 convolution's weight rows), the rows'
  // tile loads from there; elsewhere each row's 32 values are copied (rounded from f32) into a buffer first.
  // The value e simplifies to where that is an integer constant.
  static std::optional<int64_t> folded_constant(const Expr& e) {
    const Expr folded = simplify(e);
    if (const int64_t* value = as_const_int(folded)) return *value;
    return std::nullopt;
  }

  struct AmxPairTile {
    int64_t rows = 0, accumulator_row_stride = 0;
    int64_t row_tiles = 1;                    // tiles of rows / row_tiles rows each (2: rows that load in place)
    int64_t last_lanes = kAvx512VectorLanes;  // of the last chunk
    int64_t scalar_row_stride = 0;      // elements between two rows' scalars where the rows load in place; 0: copied
    std::vector<int64_t> pair_strides;  // per chunk: elements between the pairs of k and k + 2 of its vector
  };
  static std::optional<AmxPairTile> amx_pair_tile(const SpatialTile& tile, const PairOperands& o) {
    const ForNode* k = tile.reduction.back();
    const int64_t chunks = tile.chunks;
    AmxPairTile amx;
    amx.last_lanes = tile.lanes_of(tile.indices.size() - 1);
    const bool partial = amx.last_lanes < kAvx512VectorLanes;
    if (tile.accumulator_stride != 1 || k->extent % kAmxStepK != 0) return std::nullopt;
    amx.rows = int64_t(tile.indices.size()) / chunks;
    amx.row_tiles = (amx.rows + kAmxTileRows - 1) / kAmxTileRows;
    // Registers: a C tile per row tile and chunk, the row tiles, a weight tile for the full chunks (if any) and one
    // for a narrower last chunk.
    const int64_t full_chunks = partial ? chunks - 1 : chunks;
    const int64_t registers = amx.row_tiles * (chunks + 1) + (full_chunks > 0 ? 1 : 0) + (partial ? 1 : 0);
    if (amx.row_tiles > 2 || amx.rows % amx.row_tiles != 0 || registers > kAmxTiles ||
        int64_t(o.scalars.size()) != amx.rows || int64_t(o.vectors.size()) != chunks)
      return std::nullopt;
    const std::unordered_map<std::string, Expr> first_lane{{tile.lanes->name(), Expr(int64_t(0))}};
    auto index = [&](size_t n) { return substitute(tile.indices[n], first_lane); };
    for (int64_t m = 0; m < amx.rows; ++m)
      for (int64_t c = 0; c < chunks; ++c) {
        const size_t n = size_t(m * chunks + c);
        if (o.scalar_of[n] != size_t(m) || o.vector_of[n] != size_t(c) ||
            tile.lanes_of(n) != (c + 1 == chunks ? amx.last_lanes : kAvx512VectorLanes))
          return std::nullopt;
        const auto from_first = folded_constant(index(n) - index(0));
        if (m == 1 && c == 0 && from_first) amx.accumulator_row_stride = *from_first;
        if (!from_first || *from_first != m * amx.accumulator_row_stride + c * kAvx512VectorLanes) return std::nullopt;
      }
    if (amx.accumulator_row_stride < (chunks - 1) * kAvx512VectorLanes + amx.last_lanes) return std::nullopt;
    for (const Expr& scalar : o.scalars)
      if (lane_step(bf16_value_load(scalar)->index, k->name()) != 1) return std::nullopt;
    auto scalar_at = [&](size_t m) { return bf16_value_load(o.scalars[m])->index; };
    if (amx.rows > 1 &&
        std::none_of(o.scalars.begin(), o.scalars.end(), [](const Expr& e) { return e.as<CastNode>(); }))
      if (const auto stride = folded_constant(scalar_at(1) - scalar_at(0));
          stride && *stride >= kAmxStepK &&
          bf16_value_load(o.scalars[1])->buffer->name == bf16_value_load(o.scalars[0])->buffer->name) {
        amx.scalar_row_stride = *stride;
        for (int64_t m = 2; m < amx.rows; ++m)
          if (folded_constant(scalar_at(size_t(m)) - scalar_at(0)) != m * *stride ||
              bf16_value_load(o.scalars[size_t(m)])->buffer->name != bf16_value_load(o.scalars[0])->buffer->name)
            amx.scalar_row_stride = 0;
      }
    if (amx.row_tiles > 1 && !amx.scalar_row_stride) return std::nullopt;  // one buffer of rows
    // Each step's 16 pairs of k (k = 32 s + 2 p, any s) a constant apart: rows of one weight tile.
    const Expr step_var = var(k->name() + ".step");
    for (const Expr& vector : o.vectors) {
      const Expr at = substitute(bf16_value_load(vector)->index, first_lane);
      auto at_pair = [&](int64_t p) { return substitute(at, {{k->name(), step_var * kAmxStepK + 2 * p}}); };
      const auto stride = folded_constant(at_pair(1) - at_pair(0));
      if (!stride || *stride < 2 * kAvx512VectorLanes) return std::nullopt;  // rows of a tile must not overlap
      for (int64_t p = 2; p < kAmxStepK / 2; ++p)
        if (folded_constant(at_pair(p) - at_pair(0)) != p * *stride) return std::nullopt;
      amx.pair_strides.push_back(*stride);
    }
    return amx;
  }

  // The AMX form (amx_pair_tile), compiled where the compiler targets AMX and run where the kernel lets this process
  // use AMX's tile data (ingot_amx_ready); the caller prints `else` and the other forms after it. It is printed in a
  // stage's function, which declares the shape its tiles took (print_stage_function). from_zeros: its accumulators
  // start from tilezero (print_tile_from_zeros), not loaded.
  void print_amx_pair_tile(const SpatialTile& tile, const PairOperands& o, const AmxPairTile& amx, bool from_zeros) {
    amx_pair_tiles_ = amx_tiles_in_function_ = true;
    // Tiles: the accumulators (row tile r, chunk c: r * chunks + c), the row tiles, the full chunks' weight tiles in
    // turn, the last chunk's own where it has fewer lanes (the last register).
    const bool partial = amx.last_lanes < kAvx512VectorLanes;
    const int64_t chunks = tile.chunks, c_tiles = amx.row_tiles * chunks, a_tile = c_tiles,
                  first_b_tile = c_tiles + amx.row_tiles, full_chunks = partial ? chunks - 1 : chunks,
                  narrow_b_tile = partial ? kAmxTiles - 1 : -1,
                  b_tiles = std::min<int64_t>(full_chunks, kAmxTiles - first_b_tile - (partial ? 1 : 0)),
                  tile_rows = amx.rows / amx.row_tiles;
    auto bytes_of_chunk = [&](int64_t c) {
      return std::to_string((c + 1 == chunks ? amx.last_lanes : kAvx512VectorLanes) * 4);
    };
    const std::string acc = lookup(tile.fold->buffer).c_name;
    auto address = [&](const Expr& bf16_value) { return bf16_value_address(tile, bf16_value); };
    auto accumulators = [&](int64_t c_tile) {  // of row tile c_tile / chunks, chunk c_tile % chunks
      const int64_t n = c_tile / chunks * tile_rows * chunks + c_tile % chunks;
      return "&" + acc + "[" + at_first_lane(tile, tile.indices[size_t(n)]) + "]";
    };
    std::string colsb, rows;
    for (int64_t t = 0; t < kAmxTiles; ++t) {
      const bool c = t < c_tiles, a = t >= a_tile && t < first_b_tile,
                 b = (t >= first_b_tile && t < first_b_tile + b_tiles) || t == narrow_b_tile;
      colsb += (t ? ", " : "") + (c                    ? bytes_of_chunk(t % chunks)
                                  : t == narrow_b_tile ? bytes_of_chunk(chunks - 1)
                                                       : std::to_string(a || b ? kAmxRowBytes : 0));
      rows += (t ? ", " : "") + std::to_string(c || a ? tile_rows : b ? kAmxStepK / 2 : 0);
    }
    emit(kAmxGuard);
    open("if (ingot_amx_ready()) {");
    emit("static const ingot_amx_tiles ingot_amx_shape = {1, 0, {}, {" + colsb + "}, {" + rows + "}};");
    emit("ingot_amx_configure(&ingot_amx_shape, &ingot_amx_taken);");
    const std::string c_stride = std::to_string(amx.accumulator_row_stride * 4);
    for (int64_t c = 0; c < c_tiles; ++c)
      emit(from_zeros ? "_tile_zero(" + std::to_string(c) + ");"
                      : "_tile_loadd(" + std::to_string(c) + ", " + accumulators(c) + ", " + c_stride + ");");
    if (!amx.scalar_row_stride) emit("alignas(64) uint16_t ingot_rows[" + std::to_string(amx.rows * kAmxStepK) + "];");
    std::vector<std::unique_ptr<VarScope>> scopes;
    for (const ForNode* r : tile.reduction) {
      std::string header = for_header(r);
      if (r == tile.reduction.back())
        header.replace(header.rfind("; ++"), std::string::npos,
                       "; " + names_.loop_var(r->name()) + " += " + std::to_string(kAmxStepK) + ") {");
      open(header);
      scopes.push_back(std::make_unique<VarScope>(*this, r));
    }
    if (amx.scalar_row_stride) {
      // Each row's 64 bytes of a step lie a row apart (a weight's rows, 2 KB apart for 1024 input channels), which the
      // hardware prefetchers do not follow: ResNeXt in bf16 ran 69.7 ms with the rows of the step 4 steps ahead
      // prefetched, 75.5 without (two runs each, in turn). The distance is weakly supported: later, with other
      // changes, 8 steps ahead ran 62.4-68.5 ms (4 runs), 6, 10, 12 and 16 steps and 4 again 64.9-69.1 (2 runs each).
      for (int64_t m = 0; m < amx.rows; ++m)
        emit("_mm_prefetch(reinterpret_cast<const char*>(" + address(o.scalars[size_t(m)]) + " + " +
             std::to_string(8 * kAmxStepK) + "), _MM_HINT_T0);");
      for (int64_t r = 0; r < amx.row_tiles; ++r)
        emit("_tile_loadd(" + std::to_string(a_tile + r) + ", " + address(o.scalars[size_t(r * tile_rows)]) + ", " +
             std::to_string(amx.scalar_row_stride * 2) + ");");
    } else {
      for (int64_t m = 0; m < amx.rows; ++m) {
        const bool from_f32 = o.scalars[size_t(m)].as<CastNode>() != nullptr;
        emit(std::string(from_f32 ? "ingot_bf16x32_of_f32(" : "ingot_bf16x32(") + "&ingot_rows[" +
             std::to_string(m * kAmxStepK) + "], " + address(o.scalars[size_t(m)]) + ");");
      }
      emit("_tile_loadd(" + std::to_string(a_tile) + ", ingot_rows, " + std::to_string(kAmxRowBytes) + ");");
    }
    for (int64_t c = 0; c < chunks; ++c) {
      const std::string b = std::to_string(c < full_chunks ? first_b_tile + c % b_tiles : narrow_b_tile);
      emit("_tile_loadd(" + b + ", " + address(o.vectors[size_t(c)]) + ", " +
           std::to_string(amx.pair_strides[size_t(c)] * 2) + ");");
      for (int64_t r = 0; r < amx.row_tiles; ++r)
        emit("_tile_dpbf16ps(" + std::to_string(r * chunks + c) + ", " + std::to_string(a_tile + r) + ", " + b + ");");
    }
    for (size_t n = 0; n < tile.reduction.size(); ++n) close();
    scopes.clear();
    for (int64_t c = 0; c < c_tiles; ++c)
      emit("_tile_stored(" + std::to_string(c) + ", " + accumulators(c) + ", " + c_stride + ");");
    close("} else");
    emit("#endif");
  }

  // Where `zeros` stores 0 into exactly the accumulators of `tile_loop`, an explicit spatial tile, the tile's vector
  // forms start from zero (registers set to zero, AMX's tilezero) and the zeros are stored only before the plain loops
  // that run where those forms do not compile. Loading accumulators just stored costs: an AMX tile waits for the
  // stores to drain, and a channel tile's accumulators, a plane apart, are gathered (docs/strategies.md: ResNeXt in
  // bf16 1.10x and 1.06x more, EfficientNet 1.04-1.05x). Returns whether it printed both statements.
  bool print_tile_from_zeros(const Stmt& zeros, const Stmt& tile_loop) {
    auto* loop = as<ForNode>(tile_loop);
    if (!loop || loop->loop_kind != LoopKind::kSerial || printing_spatial_fallback_ || !zero_fill(zeros)) return false;
    const std::optional<SpatialTile> tile = explicit_spatial_tile(tile_loop);
    if (!tile || !zeros_exactly_the_accumulators(zeros, *tile)) return false;
    print_spatial_tile(tile_loop, *tile, zeros);
    return true;
  }

  // The store of s where s is loops around one store of +0.0 (a tile may start from zero registers only where the sum
  // would have started from +0.0), else null.
  static const StoreNode* zero_fill(const Stmt& s) {
    Stmt body = s;
    while (auto* loop = as<ForNode>(body)) body = loop->body;
    auto* store = as<StoreNode>(body);
    if (!store || body == s) return nullptr;
    const Expr value = simplify(store->value);
    auto* zero = value.as<FloatImmNode>();
    return zero && zero->value == 0.0 && !std::signbit(zero->value) ? store : nullptr;
  }

  // Whether s (a zero_fill) stores into the tile's accumulator buffer exactly the elements of the tile's accumulators,
  // each once: offsets from the first accumulator's first lane, compared as integers, where both move by a constant
  // per step of each of their loops (lane_step), whatever the other loops' values.
  static bool zeros_exactly_the_accumulators(const Stmt& s, const SpatialTile& tile) {
    const StoreNode* store = zero_fill(s);
    if (!store || store->buffer.get() != tile.fold->buffer.get()) return false;
    const std::string& lane = tile.lanes->name();
    const Expr first = substitute(tile.indices[0], {{lane, Expr(int64_t(0))}});
    std::vector<int64_t> covered;
    for (size_t n = 0; n < tile.indices.size(); ++n) {
      const auto start = folded_constant(substitute(tile.indices[n], {{lane, Expr(int64_t(0))}}) - first);
      const int64_t step = lane_step(tile.indices[n], lane);
      if (!start || (step == 0 && tile.lanes_of(n) > 1)) return false;
      for (int64_t l = 0; l < tile.lanes_of(n); ++l) covered.push_back(*start + l * step);
    }
    std::unordered_map<std::string, Expr> at_zero;
    for (Stmt body = s; auto* loop = as<ForNode>(body); body = loop->body) at_zero[loop->name()] = Expr(int64_t(0));
    const auto base = folded_constant(substitute(store->index, at_zero) - first);
    if (!base) return false;
    std::vector<int64_t> zeroed{*base};
    for (Stmt body = s; auto* loop = as<ForNode>(body); body = loop->body) {
      if (loop->extent == 1) continue;
      const int64_t step = lane_step(store->index, loop->name());
      if (step == 0 || zeroed.size() * size_t(loop->extent) > covered.size()) return false;
      std::vector<int64_t> more;
      for (int64_t offset : zeroed)
        for (int64_t i = 0; i < loop->extent; ++i) more.push_back(offset + i * step);
      zeroed = std::move(more);
    }
    std::sort(covered.begin(), covered.end());
    std::sort(zeroed.begin(), zeroed.end());
    return zeroed == covered && std::adjacent_find(covered.begin(), covered.end()) == covered.end();
  }

  // A tile of bf16 products (SpatialTile::bf16_pairs) with AVX-512 BF16: the innermost reduction loop steps by two, and
  // each step is one vdpbf16ps per accumulator (16 lanes, each adding the products of a pair of k): the scalar
  // operand's pair broadcast (converted from f32 first where it is bf16(x)), the vector operand's 32 bf16 (its lanes'
  // pairs, adjacent) loaded as they lie, once per step, then the rows' dot products row by row as an outer product.
  // Before it the AMX form where the tile has one (amx_pair_tile); elsewhere the plain loops, converting each element.
  void print_bf16_pair_tile(const Stmt& s, const SpatialTile& tile, const Stmt& zeros) {
    bf16_pair_tiles_ = true;
    vector_width(tile.lanes);  // 16: the head then defines AVX-512's vectors
    auto accumulator = [](size_t n) { return "ingot_t" + std::to_string(n); };
    const std::string acc = lookup(tile.fold->buffer).c_name;
    auto address = [&](const Expr& bf16_value) { return bf16_value_address(tile, bf16_value); };
    const PairOperands o = pair_operands(tile);
    const std::optional<AmxPairTile> amx = amx_pair_tile(tile, o);
    if (amx) {
      print_amx_pair_tile(tile, o, *amx, zeros != nullptr);
      open("{");
    }
    emit(kBf16Guard);
    open("{");
    for (size_t n = 0; n < tile.indices.size(); ++n)
      emit("ingot_f32xN " + accumulator(n) + " = " +
           (zeros != nullptr ? "{}"
                             : vector_load(kAvx512VectorLanes, tile.lanes_of(n),
                                           "&" + acc + "[" + at_first_lane(tile, tile.indices[n]) + "]")) +
           ";");
    std::vector<std::unique_ptr<VarScope>> scopes;
    for (const ForNode* r : tile.reduction) {
      std::string header = for_header(r);
      if (r == tile.reduction.back())
        header.replace(header.rfind("; ++"), std::string::npos, "; " + names_.loop_var(r->name()) + " += 2) {");
      open(header);
      scopes.push_back(std::make_unique<VarScope>(*this, r));
    }
    for (size_t i = 0; i < o.vectors.size(); ++i) {
      const std::string ingot_v = "const __m512i ingot_v" + std::to_string(i) + " = ";
      if (o.vector_lanes[i] == kAvx512VectorLanes) {
        emit(ingot_v + "_mm512_loadu_si512(" + address(o.vectors[i]) + ");");
      } else {
        char mask[32];
        std::snprintf(mask, sizeof mask, "(__mmask32)0x%llXu",
                      static_cast<unsigned long long>((1ull << (2 * o.vector_lanes[i])) - 1ull));
        emit(ingot_v + "_mm512_maskz_loadu_epi16(" + mask + ", " + address(o.vectors[i]) + ");");
      }
    }
    for (size_t j = 0; j < o.scalars.size(); ++j) {
      const bool from_f32 = o.scalars[j].as<CastNode>() != nullptr;
      emit("const __m512i ingot_s" + std::to_string(j) + " = " +
           (from_f32 ? "ingot_pair_bf16_of_f32(" : "ingot_pair_bf16(") + address(o.scalars[j]) + ");");
      for (size_t n = 0; n < tile.terms.size(); ++n)
        if (o.scalar_of[n] == j)
          emit(accumulator(n) + " = (ingot_f32xN)_mm512_dpbf16_ps((__m512)" + accumulator(n) + ", (__m512bh)ingot_s" +
               std::to_string(j) + ", (__m512bh)ingot_v" + std::to_string(o.vector_of[n]) + ");");
    }
    for (size_t n = 0; n < tile.reduction.size(); ++n) close();
    scopes.clear();
    for (size_t n = 0; n < tile.indices.size(); ++n)
      emit("ingot_store_masked_f32xN(" + lane_mask(kAvx512VectorLanes, tile.lanes_of(n)) + ", &" + acc + "[" +
           at_first_lane(tile, tile.indices[n]) + "], " + accumulator(n) + ");");
    close();
    print_spatial_fallback(s, zeros);
    if (amx) close();
  }

  // The first of a spatial tile's innermost reduction loops that are unrolled: those whose extents multiply to at
  // most kMaxUnrolledTaps (a depthwise 5 x 5 kernel's taps). Each tap's border masks are then constants: EfficientNet's
  // depthwise convolutions spent more on working out the masks of their loads than on the loads (the whole model
  // 1.01-1.03x, its exported program and the unrolled one called in turn in one process).
  static size_t unrolled_taps(const SpatialTile& tile) {
    constexpr int64_t kMaxUnrolledTaps = 25;
    int64_t copies = 1;
    size_t first = tile.reduction.size();
    while (first > 0 && copies * tile.reduction[first - 1]->extent <= kMaxUnrolledTaps)
      copies *= tile.reduction[--first]->extent;
    return first;
  }

  // How many structurally distinct vector operands (collect_lane_operands) the terms read.
  static size_t distinct_lane_operands(const std::vector<Expr>& terms, const std::string& lanes) {
    std::vector<Expr> distinct;
    for (const Expr& term : terms) collect_lane_operands(term, lanes, distinct);
    return distinct.size();
  }

  // zeros: the statement before the tile, which zeroes exactly its accumulators (print_tile_from_zeros), or null.
  void print_spatial_tile(const Stmt& s, const SpatialTile& tile, const Stmt& zeros = nullptr) {
    if (tile.bf16_pairs) return print_bf16_pair_tile(s, tile, zeros);
    const int64_t width = vector_width(tile.lanes);
    const std::string& v = tile.lanes->name();
    auto chunk_mask = [&](size_t accumulator) { return lane_mask(width, tile.lanes_of(accumulator)); };
    auto accumulator = [](size_t n) { return "ingot_t" + std::to_string(n); };
    const std::string acc = lookup(tile.fold->buffer).c_name;
    const std::unordered_map<std::string, Expr> first_lane{{v, Expr(int64_t(0))}};
    auto at_first_lane = [&](const Expr& e) { return index_code(simplify(substitute(e, first_lane))); };
    emit(isa_guard(width));
    open("{");
    const int64_t stride = tile.accumulator_stride;
    strided_accumulators_ = strided_accumulators_ || stride != 1;
    for (size_t n = 0; n < tile.indices.size(); ++n) {
      const std::string address = "&" + acc + "[" + at_first_lane(tile.indices[n]) + "]";
      emit("ingot_f32xN " + accumulator(n) + " = " +
           (zeros != nullptr ? "{}"
            : stride == 1    ? vector_load(width, tile.lanes_of(n), address)
                             : "ingot_load_strided_f32xN(" + std::to_string(tile.lanes_of(n)) + ", " + address + ", " +
                                std::to_string(stride) + ")") +
           ";");
    }
    // The taps of the innermost loops (unrolled_taps) written out: each term once per combination of their values
    // (terms[k] adds to accumulator accumulator_of[k]), where that lets taps share an operand load below (a stencil's
    // input row, shifted by a tap along w, is read by each row whose window covers it: a depthwise 5 x 5 tile of 7
    // rows loads 11 rows x 5 shifts instead of 7 x 25). Where each tap reads operands of its own (a channel tile's
    // weights) they stay loops that the compiler unrolls: written out, ResNeXt's grouped channel tiles kept more
    // broadcasts live, spilled more, and ran 1.26x slower.
    const size_t taps_from = unrolled_taps(tile);
    std::vector<Expr> terms = tile.terms;
    std::vector<size_t> accumulator_of(terms.size());
    std::iota(accumulator_of.begin(), accumulator_of.end(), size_t(0));
    bool written_out = false;
    std::vector<std::unordered_map<std::string, Expr>> taps(1);
    for (size_t n = taps_from; n < tile.reduction.size(); ++n) {
      std::vector<std::unordered_map<std::string, Expr>> more;
      for (const auto& tap : taps)
        for (int64_t value = 0; value < tile.reduction[n]->extent; ++value) {
          more.push_back(tap);
          more.back()[tile.reduction[n]->name()] = Expr(value);
        }
      taps = std::move(more);
    }
    if (taps.size() > 1) {
      // Taps share operands where the distinct ones of all taps are fewer than those of each tap added up (a tap that
      // falls wholly in a padded border reads none, and shares nothing).
      std::vector<Expr> expanded;
      size_t each_tap = 0;
      for (const auto& tap : taps) {
        std::vector<Expr> mine;
        for (const Expr& term : tile.terms) mine.push_back(simplify(substitute(term, tap)));
        each_tap += distinct_lane_operands(mine, v);
        expanded.insert(expanded.end(), mine.begin(), mine.end());
      }
      if (distinct_lane_operands(expanded, v) < each_tap) {
        written_out = true;
        terms = std::move(expanded);
        accumulator_of.clear();
        for (size_t t = 0; t < taps.size(); ++t)
          for (size_t n = 0; n < tile.terms.size(); ++n) accumulator_of.push_back(n);
      }
    }
    // The loops printed as loops: all but the written-out taps; taps kept as loops are unrolled by the compiler.
    const size_t loops = written_out ? taps_from : tile.reduction.size();
    std::vector<std::unique_ptr<VarScope>> scopes;
    for (size_t n = 0; n < loops; ++n) {
      const ForNode* r = tile.reduction[n];
      if (n >= taps_from && r->extent > 1) emit("#pragma GCC unroll " + std::to_string(r->extent));
      open(for_header(r));
      scopes.push_back(std::make_unique<VarScope>(*this, r));
      if (r == tile.reduction.front()) print_next_operand_rows_prefetch(tile, v);
    }
    // The step prefetches are worked out for the tile's loops as loops (a written-out tap is no loop step): a tile
    // that writes its taps out has none (its few taps are far fewer than those prefetches need).
    if (!written_out) {
      for (const std::string& address : operands_to_prefetch(tile, v)) emit("__builtin_prefetch(" + address + ");");
      for (const std::string& statement : next_panel_prefetches(tile, v)) emit(statement);
    }
    // Operands: each distinct one loaded once, with as many lanes as the widest chunk that uses it (every such chunk's
    // loops read those lanes). uses[k]: the operands term k reads.
    vector_operands_.clear();
    std::vector<int64_t> operand_lanes;
    std::vector<std::vector<size_t>> uses(terms.size());
    for (size_t n = 0; n < terms.size(); ++n) {
      std::vector<Expr> mine;
      collect_lane_operands(terms[n], v, mine);
      for (const Expr& e : mine) {
        size_t i = 0;
        while (i < vector_operands_.size() && !structural_equal(vector_operands_[i], e)) ++i;
        if (i == vector_operands_.size()) {
          vector_operands_.push_back(e);
          operand_lanes.push_back(0);
        }
        operand_lanes[i] = std::max(operand_lanes[i], tile.lanes_of(accumulator_of[n]));
        uses[n].push_back(i);
      }
    }
    std::vector<std::string> operand_loads(vector_operands_.size());
    // The address of each operand loaded whole and plainly (no mask, no border, contiguous), else empty.
    std::vector<std::string> plain_operand_address(vector_operands_.size());
    for (size_t i = 0; i < vector_operands_.size(); ++i) {
      // The operand's lanes are a range [lo, hi): the chunk's, narrowed by each border comparison to the lanes l with
      // step * l + d0 OP 0 (d0 its value at the chunk's first lane), emptied when a comparison that does not move
      // with the lanes fails.
      const Expr& operand = vector_operands_[i];
      std::vector<std::string> lo, hi{std::to_string(operand_lanes[i])};
      const BufferLoadNode* load = operand.as<BufferLoadNode>();
      std::vector<Expr> invariant;
      if (auto* sel = operand.as<SelectNode>()) {
        load = sel->true_value.as<BufferLoadNode>();
        std::vector<Expr> parts;
        conjuncts(sel->cond, parts);
        for (const Expr& part : parts) {
          if (!uses_var(part, v)) {
            invariant.push_back(part);
            continue;
          }
          auto* cmp = part.as<CompareNode>();
          Expr d = simplify(cmp->a - cmp->b);
          int64_t step = lane_step(d, v);
          Expr d0 = substitute(d, first_lane);
          CompareOp op = cmp->op;
          if (step < 0) {  // -step * l - d0 flips the comparison
            step = -step;
            d0 = -d0;
            op = op == CompareOp::kGE   ? CompareOp::kLE
                 : op == CompareOp::kLE ? CompareOp::kGE
                 : op == CompareOp::kGT ? CompareOp::kLT
                                        : CompareOp::kGT;
          }
          // l >= ceil(-d0 / step) for >=; l < ceil(-d0 / step) for <; > and <= shift the bound by one.
          Expr numerator = op == CompareOp::kGT || op == CompareOp::kLE ? int64_t(1) - d0 : -d0;
          std::string bound = index_code(simplify(numerator));
          if (step != 1) bound = "ingot_ceil_div(" + bound + ", " + std::to_string(step) + ")";
          (op == CompareOp::kGE || op == CompareOp::kGT ? lo : hi).push_back(bound);
        }
      }
      auto fold = [](const std::vector<std::string>& bounds, const char* pick, const std::string& none) {
        if (bounds.empty()) return none;
        std::string all = bounds[0];
        for (size_t n = 1; n < bounds.size(); ++n) all = std::string(pick) + "(" + all + ", " + bounds[n] + ")";
        return all;
      };
      std::string first = fold(lo, "ingot_lane_max", "0"), last = fold(hi, "ingot_lane_min", "");
      if (!invariant.empty()) {
        Expr all = invariant[0];
        for (size_t n = 1; n < invariant.size(); ++n) all = logical_and(all, invariant[n]);
        last = "(" + expr(all).text + " ? " + last + " : 0)";
      }
      std::string address = "&" + lookup(load->buffer).c_name + "[" + at_first_lane(load->index) + "]";
      bool constant_range = lo.empty() && hi.size() == 1 && invariant.empty();
      std::string load_code;
      if (lane_step(load->index, v) == 2) {
        load_code = "ingot_load_even_f32xN(" + first + ", " + last + ", " + address + ")";
      } else {
        load_code = constant_range
                        ? vector_load(width, operand_lanes[i], address)
                        : "ingot_load_masked_f32xN(ingot_lane_range(" + first + ", " + last + "), " + address + ")";
        if (constant_range && operand_lanes[i] == width && operand.as<BufferLoadNode>())
          plain_operand_address[i] = address;
      }
      operand_loads[i] = "const ingot_f32xN ingot_v" + std::to_string(i) + " = " + load_code + ";";
    }
    // The FMAs grouped by the first operand they read, each operand loaded just before its first FMA: an operand is
    // then live only while its group runs (a stencil's input row across its channels), and the accumulators keep
    // the registers. Loaded all at once, a 4 x 7 stencil tile spilled 4 accumulators.
    // An outer product (every scalar factor times every operand: a GEMM tile's rows times its vectors) with fewer
    // operands than rows goes the other way (outer_product_rows says where): the operands loaded first, then the FMAs
    // row by row, so that one broadcast row element is live at a time. Grouped by operand, g++ kept every row's
    // broadcast live across the groups: Swin's 14 x 32 tiles (28 accumulators + 14 broadcasts + 1 operand) spilled 11
    // accumulators to the stack.
    vector_loop_var_ = v;
    std::vector<size_t> order(terms.size());
    std::iota(order.begin(), order.end(), size_t(0));
    auto first_operand = [&](size_t n) { return uses[n].empty() ? size_t(0) : uses[n][0]; };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return first_operand(a) < first_operand(b); });
    std::vector<bool> loaded(vector_operands_.size());
    std::vector<Expr> row_scalar(terms.size());  // of a term read from memory by its FMA: its row's broadcast factor
    if (std::optional<std::vector<size_t>> rows = written_out ? std::nullopt : outer_product_rows(terms, uses, width)) {
      order = *rows;
      row_scalar = fmas_from_memory(terms, uses, plain_operand_address, tile.indices.size(), width);
      for (size_t i = 0; i < vector_operands_.size(); ++i) {
        loaded[i] = true;
        bool in_memory = false;
        for (size_t n = 0; n < terms.size(); ++n) in_memory |= uses[n][0] == i && row_scalar[n];
        if (!in_memory) emit(operand_loads[i]);
      }
    }
    for (size_t n : order) {
      for (size_t i : uses[n])
        if (!loaded[i]) {
          emit(operand_loads[i]);
          loaded[i] = true;
        }
      const std::string a = accumulator(accumulator_of[n]);
      if (row_scalar[n]) {
        fma_from_memory_ = true;
        emit(a + " = ingot_fma_from_memory(" + a + ", " + expr(row_scalar[n]).text + ", " +
             plain_operand_address[uses[n][0]] + ");");
      } else {
        emit(a + " += " + expr(terms[n]).text + ";");
      }
    }
    vector_loop_var_.clear();
    for (size_t n = 0; n < loops; ++n) close();
    scopes.clear();
    for (size_t n = 0; n < tile.indices.size(); ++n) {
      const std::string address = "&" + acc + "[" + at_first_lane(tile.indices[n]) + "]";
      if (stride != 1)
        emit("ingot_store_strided_f32xN(" + std::to_string(tile.lanes_of(n)) + ", " + address + ", " +
             std::to_string(stride) + ", " + accumulator(n) + ");");
      else if (width != kAvx512VectorLanes && tile.lanes_of(n) == width)
        emit("ingot_store_f32xN(" + address + ", " + accumulator(n) + ");");
      else
        emit("ingot_store_masked_f32xN(" + chunk_mask(n) + ", " + address + ", " + accumulator(n) + ");");
    }
    close();
    print_spatial_fallback(s, zeros);
  }

  // Every thread of a parallel region flushes denormal floats to zero (FTZ) and reads them as zero (DAZ) until the
  // region ends, when the thread's own mode comes back: on x86 an operation on a denormal takes a microcode assist
  // of about a hundred cycles, and masked attention's softmax makes them (e^-100 in Swin's shifted windows, where the
  // products of P and V were the third-slowest stage of the model), while values under 1.2e-38 are far below any
  // tolerance.
  static void push_denormal_flush(std::vector<std::string>& head) {
    head.push_back("");
    head.push_back("#if defined(__SSE2__)");
    head.push_back("#include <xmmintrin.h>");
    head.push_back("struct ingot_flush_denormals {");
    head.push_back("  const unsigned saved = _mm_getcsr();");
    head.push_back("  ingot_flush_denormals() { _mm_setcsr(saved | 0x8040u); }  // FTZ (bit 15) and DAZ (bit 6)");
    head.push_back("  ~ingot_flush_denormals() { _mm_setcsr(saved); }");
    head.push_back("};");
    head.push_back("#else");
    head.push_back("struct ingot_flush_denormals {");
    head.push_back("  ingot_flush_denormals() {}");
    head.push_back("};");
    head.push_back("#endif");
  }

  // The marks' store and the ABI's profile entry point (cpp_printer.h), sized for every mark one run makes.
  void push_profile_marks(std::vector<std::string>& head) const {
    size_t marks = 0, kernels = 0;
    for (const StageInterval& interval : stage_intervals(f_)) {
      ++marks;
      kernels = std::max(kernels, interval.kernel + 1);
    }
    const std::string capacity = std::to_string(marks + kernels);
    head.push_back("");
    head.push_back(
        "// Profile marks: thread 0's wall-clock time at each kernel's start, after each grid barrier and at its end.");
    head.push_back("static double ingot_profile_seconds[" + capacity + "];");
    head.push_back("static int ingot_profile_count = 0;");
    head.push_back("static inline void ingot_profile_mark() {");
    head.push_back("  if (omp_get_thread_num() == 0 && ingot_profile_count < " + capacity + ")");
    head.push_back("    ingot_profile_seconds[ingot_profile_count++] = omp_get_wtime();");
    head.push_back("}");
    head.push_back("extern \"C\" int ingot_profile_read(double* seconds) {");
    head.push_back("  const int n = ingot_profile_count;");
    head.push_back("  for (int i = 0; i < n; ++i) seconds[i] = ingot_profile_seconds[i];");
    head.push_back("  ingot_profile_count = 0;");
    head.push_back("  return n;");
    head.push_back("}");
    head.push_back("extern \"C\" int ingot_profile_capacity(void) { return " + capacity + "; }");
  }

  // A strided tile's accumulators (lanes `stride` elements apart: a 1 x 1 convolution's output channels) are gathered
  // before its reduction and scattered after it, once per tile, through a copy on the stack: AVX2 has no scatter,
  // and next to the reduction (1024 steps of 28 FMAs in ResNeXt's layer 3) the copies cost little.
  static void push_strided_accumulators(std::vector<std::string>& head) {
    head.push_back(
        "static inline ingot_f32xN ingot_load_strided_f32xN(int64_t lanes, const float* p, int64_t stride) {");
    head.push_back("  float t[INGOT_F32_LANES] = {};");
    head.push_back("  for (int64_t l = 0; l < lanes; ++l) t[l] = p[l * stride];");
    head.push_back("  ingot_f32xN v;");
    head.push_back("  std::memcpy(&v, t, sizeof v);");
    head.push_back("  return v;");
    head.push_back("}");
    head.push_back(
        "static inline void ingot_store_strided_f32xN(int64_t lanes, float* p, int64_t stride, ingot_f32xN v) {");
    head.push_back("  float t[INGOT_F32_LANES];");
    head.push_back("  std::memcpy(t, &v, sizeof v);");
    head.push_back("  for (int64_t l = 0; l < lanes; ++l) p[l * stride] = t[l];");
    head.push_back("}");
  }

  // The helpers of vector maps (print_vector_map) for AVX-512 (16 lanes) or AVX2 (8), named by their lanes so that they
  // stand beside the register tiles' ingot_f32xN. min and max as std::min and std::max (vminps and vmaxps return their
  // second operand where the comparison is false: a NaN). exp with AVX-512: x's NaN passes vminps, n = round(x / ln
  // 2), r = x - n ln 2 in two parts, and vscalefps makes p 2^n, infinity past FLT_MAX; below ln(FLT_MIN) the result is
  // 0, as the scalar helper's. With AVX2 the scalar helper's steps on 8 lanes, NaN put back by a blend. tanh as the
  // scalar helper, the two forms blended by a mask.
  static void push_vector_map_helpers(std::vector<std::string>& head, int64_t lanes, bool scatters) {
    const bool avx512 = lanes == kAvx512VectorLanes;
    const std::string V = "ingot_f32x" + std::to_string(lanes), x = "_f32x" + std::to_string(lanes);
    const std::string R = avx512 ? "__m512" : "__m256", mm = avx512 ? "_mm512_" : "_mm256_",
                      I = avx512 ? "__m512i" : "__m256i", si = avx512 ? "si512" : "si256";
    std::vector<std::string> lines = {
        "",
        "// Vector maps: elementwise loops that call exp, sigmoid or tanh, as explicit vectors.",
        isa_guard(lanes),
        "#include <immintrin.h>",
        "typedef float " + V + " __attribute__((vector_size(" + std::to_string(4 * lanes) + ")));",
        "static inline " + V + " ingot_splat" + x + "(float f) { return (" + V + ")" + mm + "set1_ps(f); }",
        "static inline " + V + " ingot_load" + x + "(const float* p) { return (" + V + ")" + mm + "loadu_ps(p); }",
        "static inline void ingot_store" + x + "(float* p, " + V + " v) { " + mm + "storeu_ps(p, (" + R + ")v); }",
        "static inline " + V + " ingot_min" + x + "(" + V + " a, " + V + " b) { return (" + V + ")" + mm + "min_ps((" +
            R + ")b, (" + R + ")a); }",
        "static inline " + V + " ingot_max" + x + "(" + V + " a, " + V + " b) { return (" + V + ")" + mm + "max_ps((" +
            R + ")b, (" + R + ")a); }",
    };
    if (avx512) {
      lines.insert(
          lines.end(),
          {
              "static inline ingot_f32x16 ingot_load_first_f32x16(int n, const float* p) {",
              "  return (ingot_f32x16)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);",
              "}",
              "static inline void ingot_store_first_f32x16(int n, float* p, ingot_f32x16 v) {",
              "  _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), (__m512)v);",
              "}",
              "static inline ingot_f32x16 ingot_exp_f32x16(ingot_f32x16 x) {",
              "  const __m512 clamped = _mm512_min_ps(_mm512_set1_ps(89.0f), (__m512)x);",
              "  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(1.44269502f)),",
              "                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);",
              "  const ingot_f32x16 r = (ingot_f32x16)_mm512_fmadd_ps(",
              "      n, _mm512_set1_ps(2.12194440e-4f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), clamped));",
              "  const ingot_f32x16 p = " + kExpOfR + ";",
              "  const __mmask16 above_min = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(-87.3365479f), _CMP_NLT_UQ);",
              "  return (ingot_f32x16)_mm512_maskz_scalef_ps(above_min, (__m512)p, n);",
              "}",
          });
    } else {
      lines.insert(lines.end(),
                   {
                       "static inline __m256i ingot_first_lanes_x8(int n) {",
                       "  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));",
                       "}",
                       "static inline ingot_f32x8 ingot_load_first_f32x8(int n, const float* p) {",
                       "  return (ingot_f32x8)_mm256_maskload_ps(p, ingot_first_lanes_x8(n));",
                       "}",
                       "static inline void ingot_store_first_f32x8(int n, float* p, ingot_f32x8 v) {",
                       "  _mm256_maskstore_ps(p, ingot_first_lanes_x8(n), (__m256)v);",
                       "}",
                       "static inline ingot_f32x8 ingot_exp_f32x8(ingot_f32x8 x) {",
                       "  const __m256i above_low = _mm256_min_epu32(_mm256_castps_si256((__m256)x), "
                       "_mm256_set1_epi32(int32_t(0xc2b00000u)));",
                       "  const __m256 clamped = _mm256_castsi256_ps(_mm256_min_epi32(above_low, "
                       "_mm256_set1_epi32(0x42b20000)));",
                       "  const __m256 shifted = _mm256_fmadd_ps(clamped, _mm256_set1_ps(1.44269502f), "
                       "_mm256_set1_ps(12582912.0f));",
                       "  const __m256i n_int = _mm256_min_epi32(",
                       "      _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_set1_epi32(0x4b400000)), "
                       "_mm256_set1_epi32(127));",
                       "  const ingot_f32x8 n = (ingot_f32x8)_mm256_cvtepi32_ps(n_int);",
                       "  const ingot_f32x8 r = ((ingot_f32x8)clamped - n * 0.693359375f) + n * 2.12194440e-4f;",
                       "  const ingot_f32x8 p = " + kExpOfR + ";",
                       "  const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n_int, "
                       "_mm256_set1_epi32(127)), 23));",
                       "  const __m256 y = _mm256_mul_ps((__m256)p, scale);",
                       "  return (ingot_f32x8)_mm256_blendv_ps(y, (__m256)x, _mm256_cmp_ps((__m256)x, (__m256)x, "
                       "_CMP_UNORD_Q));",
                       "}",
                   });
    }
    if (scatters && avx512)
      lines.insert(
          lines.end(),
          {
              "static inline __m512i ingot_lane_offsets_x16(int step) {",
              "  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),",
              "                            _mm512_set1_epi32(step));",
              "}",
              "static inline void ingot_store_strided_f32x16(float* p, int step, ingot_f32x16 v) {",
              "  _mm512_i32scatter_ps(p, ingot_lane_offsets_x16(step), (__m512)v, 4);",
              "}",
              "static inline void ingot_store_first_strided_f32x16(int n, float* p, int step, ingot_f32x16 v) {",
              "  _mm512_mask_i32scatter_ps(p, (__mmask16)((1u << n) - 1u), ingot_lane_offsets_x16(step), (__m512)v, "
              "4);",
              "}",
          });
    if (scatters && !avx512)
      lines.insert(lines.end(),
                   {
                       "static inline void ingot_store_first_strided_f32x8(int n, float* p, int step, ingot_f32x8 v) {",
                       "  for (int l = 0; l < n; ++l) p[l * step] = v[l];  // AVX2 has no scatter",
                       "}",
                       "static inline void ingot_store_strided_f32x8(float* p, int step, ingot_f32x8 v) {",
                       "  ingot_store_first_strided_f32x8(8, p, step, v);",
                       "}",
                   });
    const std::string sign_mask = mm + "set1_epi32(int32_t(0x80000000u))";
    lines.insert(
        lines.end(),
        {
            "static inline " + V + " ingot_tanh" + x + "(" + V + " x) {",
            "  const " + I + " sign = " + mm + "and_" + si + "(" + mm + "castps_" + si + "((" + R + ")x), " +
                sign_mask + ");",
            "  const " + V + " a = (" + V + ")" + mm + "cast" + si + "_ps(" + mm + "xor_" + si + "(" + mm + "castps_" +
                si + "((" + R + ")x), sign));",
            "  const " + V + " z = a * a;",
            "  const " + V + " small = " + kTanhNearZero + ";",
            "  const " + V + " large = 1.0f - 2.0f / (ingot_exp" + x + "(a + a) + 1.0f);",
            avx512 ? "  const __m512 t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask((__m512)a, _mm512_set1_ps(0.625f), "
                     "_CMP_LT_OQ), (__m512)large, (__m512)small);"
                   : "  const __m256 t = _mm256_blendv_ps((__m256)large, (__m256)small, _mm256_cmp_ps((__m256)a, "
                     "_mm256_set1_ps(0.625f), _CMP_LT_OQ));",
            "  return (" + V + ")" + mm + "cast" + si + "_ps(" + mm + "or_" + si + "(" + mm + "castps_" + si +
                "(t), sign));",
            "}",
            "#endif",
        });
    head.insert(head.end(), lines.begin(), lines.end());
  }

  // The pair maps' stores (print_pair_map): a's and b's 16 elements rounded to bf16 and interleaved, a's first in each
  // pair; all 16 pairs, or the first n.
  static void push_pair_map_helpers(std::vector<std::string>& head) {
    head.insert(
        head.end(),
        {
            "",
            "// Pair maps: tensors of bf16 pairs written 16 pixels at a time.",
            kBf16Guard,
            "#include <immintrin.h>",
            "static inline __m512i ingot_bf16_pairs(__m512 a, __m512 b) {",
            "  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, "
            "8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);",
            "  return _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(b, a));",
            "}",
            "static inline void ingot_store_bf16_pairs(uint16_t* p, __m512 a, __m512 b) {",
            "  _mm512_storeu_si512(p, ingot_bf16_pairs(a, b));",
            "}",
            "static inline void ingot_store_first_bf16_pairs(int n, uint16_t* p, __m512 a, __m512 b) {",
            "  _mm512_mask_storeu_epi16(p, (__mmask32)((1ull << (2 * n)) - 1u), ingot_bf16_pairs(a, b));",
            "}",
            "#endif",
        });
  }

  // ingot_load_f32xN: a whole vector from unaligned memory, kept in a register.
  static void push_plain_vector_load(std::vector<std::string>& head) {
    head.push_back("static inline ingot_f32xN ingot_load_f32xN(const float* p) {");
    head.push_back("  ingot_f32xN v;");
    head.push_back("  std::memcpy(&v, p, sizeof v);  // unaligned, and no aliasing question");
    // Opaque to the optimizer, so the loaded value stays in a register: otherwise g++ folds the load back into
    // every FMA that uses it as a memory operand and loads a shared operand once per fold.
    head.push_back("  __asm__(\"\" : \"+v\"(v));");
    head.push_back("  return v;");
    head.push_back("}");
  }

  // The integer helpers of lane ranges at padded borders: max, min, ceiling division, a range of bits.
  static void push_lane_arithmetic(std::vector<std::string>& head) {
    head.push_back("static inline int64_t ingot_lane_max(int64_t a, int64_t b) { return a < b ? b : a; }");
    head.push_back("static inline int64_t ingot_lane_min(int64_t a, int64_t b) { return a < b ? a : b; }");
    head.push_back("static inline int64_t ingot_ceil_div(int64_t a, int64_t b) {  // b > 0");
    head.push_back("  return a >= 0 ? (a + b - 1) / b : -(-a / b);");
    head.push_back("}");
    head.push_back("static inline uint32_t ingot_bit_range(int64_t lo, int64_t hi, int64_t width) {  // bits [lo, hi)");
    head.push_back("  lo = lo < 0 ? 0 : lo;");
    head.push_back("  hi = hi > width ? width : hi;");
    head.push_back("  return hi <= lo ? 0u : (uint32_t)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));");
    head.push_back("}");
  }

  // The AVX2 forms of the explicit-vector helpers (8 lanes, 16 ymm registers). AVX2 has no mask registers: a mask is
  // a bit set (ingot_mask, as AVX-512's __mmask16) turned into a vector of lane masks for vmaskmovps, whose masked
  // lanes are neither read nor written (no fault past a row's end or before a padded border).
  void push_avx2_helpers(std::vector<std::string>& head) const {
    head.push_back("");
    head.push_back("// Register tiles as explicit vectors where AVX2 and FMA are (ymm, 8 lanes).");
    head.push_back("#if defined(__AVX2__) && defined(__FMA__)");
    head.push_back("#include <immintrin.h>");
    head.push_back("#define INGOT_F32_LANES 8");
    head.push_back("typedef float ingot_f32xN __attribute__((vector_size(INGOT_F32_LANES * 4)));");
    head.push_back("typedef uint32_t ingot_mask;  // bit l: lane l");
    push_plain_vector_load(head);
    head.push_back("static inline float ingot_sum_f32xN(ingot_f32xN v) {  // a tree of halves");
    head.push_back("  __m128 s = _mm_add_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));");
    head.push_back("  s = _mm_add_ps(s, _mm_movehl_ps(s, s));");
    head.push_back("  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));");
    head.push_back("}");
    head.push_back(
        "// The sums of a, b, c and d into s[0..3]: pairs interleaved and added within each 128-bit half, then the "
        "halves.");
    head.push_back(
        "static inline void ingot_sum4_f32xN(ingot_f32xN a, ingot_f32xN b, ingot_f32xN c, ingot_f32xN d, float* s) {");
    head.push_back(
        "  const __m256 ab = _mm256_add_ps(_mm256_unpacklo_ps((__m256)a, (__m256)b), _mm256_unpackhi_ps((__m256)a, "
        "(__m256)b));");
    head.push_back(
        "  const __m256 cd = _mm256_add_ps(_mm256_unpacklo_ps((__m256)c, (__m256)d), _mm256_unpackhi_ps((__m256)c, "
        "(__m256)d));");
    head.push_back(
        "  const __m256 abcd = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, 0x44), _mm256_shuffle_ps(ab, cd, 0xEE));");
    head.push_back("  _mm_storeu_ps(s, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));");
    head.push_back("}");
    head.push_back("static inline __m256i ingot_lane_masks(ingot_mask m) {");
    head.push_back("  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);");
    head.push_back("  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);");
    head.push_back("}");
    head.push_back("static inline ingot_f32xN ingot_load_masked_f32xN(ingot_mask m, const float* p) {");
    head.push_back("  ingot_f32xN v = (ingot_f32xN)_mm256_maskload_ps(p, ingot_lane_masks(m));");
    head.push_back("  __asm__(\"\" : \"+v\"(v));");
    head.push_back("  return v;");
    head.push_back("}");
    push_lane_arithmetic(head);
    if (strided_accumulators_) push_strided_accumulators(head);
    if (fma_from_memory_) {
      // acc + s * p[0..7], p read by the FMA itself (vfmadd231ps with a memory operand): no register holds it.
      head.push_back("typedef struct { float lanes[8]; } ingot_f32x8_memory;");
      head.push_back("static inline ingot_f32xN ingot_fma_from_memory(ingot_f32xN acc, float s, const float* p) {");
      head.push_back("  const ingot_f32xN b = (ingot_f32xN)_mm256_set1_ps(s);");
      head.push_back(
          "  __asm__(\"vfmadd231ps {%2, %1, %0|%0, %1, %2}\" : \"+x\"(acc) : \"x\"(b), \"m\"(*(const "
          "ingot_f32x8_memory*)p));");
      head.push_back("  return acc;");
      head.push_back("}");
    }
    head.push_back(
        "static inline ingot_mask ingot_lane_range(int64_t lo, int64_t hi) { return ingot_bit_range(lo, hi, 8); }");
    // Lanes lo .. hi - 1 of a stride-2 window are its even elements 2 lo .. 2 hi - 2, from two vectors: the even
    // elements of each 128-bit half side by side (a0 a2 b0 b2 | a4 a6 b4 b6), then the 64-bit pairs reordered.
    head.push_back("static inline ingot_f32xN ingot_load_even_f32xN(int64_t lo, int64_t hi, const float* p) {");
    head.push_back("  uint32_t m = ingot_bit_range(2 * lo, 2 * hi - 1, 16);");
    head.push_back("  __m256 a = _mm256_maskload_ps(p, ingot_lane_masks(m & 0xFF));");
    head.push_back("  __m256 b = _mm256_maskload_ps(p + 8, ingot_lane_masks(m >> 8));");
    head.push_back("  __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));");
    head.push_back(
        "  ingot_f32xN v = (ingot_f32xN)_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), "
        "_MM_SHUFFLE(3, 1, 2, 0)));");
    head.push_back("  __asm__(\"\" : \"+v\"(v));");
    head.push_back("  return v;");
    head.push_back("}");
    head.push_back("static inline void ingot_store_f32xN(float* p, ingot_f32xN v) { std::memcpy(p, &v, sizeof v); }");
    head.push_back("static inline void ingot_store_masked_f32xN(ingot_mask m, float* p, ingot_f32xN v) {");
    head.push_back("  _mm256_maskstore_ps(p, ingot_lane_masks(m), (__m256)v);");
    head.push_back("}");
    head.push_back("#endif");
  }

  // A loop nest whose outer loops are parallel: they are collapsed into one `omp for` worksharing loop.
  void print_parallel_loop(const ForNode* loop) {
    std::vector<const ForNode*> chain{loop};
    while (auto* inner = as<ForNode>(chain.back()->body)) {
      if (!loop_is_parallel(inner->loop_kind)) break;
      chain.push_back(inner);
    }
    std::string pragma = "#pragma omp for";
    if (chain.size() > 1) pragma += " collapse(" + std::to_string(chain.size()) + ")";
    emit(pragma + " schedule(static) nowait");
    std::vector<std::unique_ptr<VarScope>> scopes;
    for (const ForNode* l : chain) {
      open(for_header(l));
      scopes.push_back(std::make_unique<VarScope>(*this, l));
    }
    print_serial(chain.back()->body, true);
    for (size_t i = 0; i < chain.size(); ++i) {
      scopes.pop_back();
      close();
    }
  }

  static bool is_region_structure(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kSeq:
      case StmtKind::kAllocate:
      case StmtKind::kBarrier:
      case StmtKind::kPrefetch: return true;
      case StmtKind::kFor: return loop_is_parallel(as<ForNode>(s)->loop_kind);
      default: return false;
    }
  }

  // ---- Stage functions -------------------------------------------------------------------------------------

  // Every stage (a parallel loop nest, or a statement one thread runs) is printed as a static function and
  // called from ingot_run. Stages that differ only in the buffers they touch share one function: a
  // whole-model program repeats the same few loop nests thousands of times (every LSTM cell), and
  // compiling each copy made a paper-size LSTM kernel take more than ten minutes to build.
  struct StageFunction {
    std::vector<std::string> lines;
    std::vector<SourceLines> vectorized;  // 0-based indices into lines
  };

  // The stage as a function named `name`, printed with the given name table.
  // A kernel function (kernel = true) holds one parallel region that calls the stage functions of its stages.
  StageFunction print_stage_function(const Stmt& s, const std::string& name, const std::vector<Buffer>& params,
                                     const std::set<std::string>& written, bool canonical, bool kernel = false) {
    std::vector<std::string> saved_body = std::move(body_);
    std::vector<SourceLines> saved_vectorized = std::move(vectorized_body_lines_);
    std::map<std::string, BufferInfo> saved_buffers = std::move(buffers_);
    NameTable saved_names = std::move(names_);
    int saved_indent = indent_;
    body_.clear();
    vectorized_body_lines_.clear();
    buffers_.clear();
    names_ = NameTable(canonical);
    indent_ = 0;
    // No __restrict__: threads share every buffer of a region, and with __restrict__ parameters g++ compiled a
    // parallel stage that made a small BERT go wrong in most runs on 2 threads (tests/runtime/local_run_test.cc),
    // while each stage on its own was race-free. Without it g++ still vectorizes, checking overlap at run time.
    std::string signature;
    for (const Buffer& b : params) {
      const BufferInfo& outer = saved_buffers.at(b->name);
      buffers_[b->name] = {names_.buffer(b->name), outer.dtype};
      signature += std::string(signature.empty() ? "" : ", ") + (written.count(b->name) ? "" : "const ") +
                   c_type(outer.dtype, "") + "* " + buffers_[b->name].c_name;
    }
    // Kernel and stage functions stay out of line: inlining thousands of kernels into ingot_run made g++ take
    // minutes, and a stage function is the unit the compiler optimizes between two barriers.
    open("__attribute__((noinline)) static void " + name + "(" + signature + ") {");
    const size_t first_line = body_.size();
    const bool saved_amx = amx_tiles_in_function_;
    amx_tiles_in_function_ = false;
    if (kernel) {
      emit("#pragma omp parallel");
      open("{");
      emit("const ingot_flush_denormals ingot_denormals_flushed;");
      emit_profile_mark();
      print_region(s);
      emit_region_end_mark();
      close();
    } else if (auto* loop = as<ForNode>(s); loop && loop_is_parallel(loop->loop_kind)) {
      print_parallel_loop(loop);
    } else {
      print_serial(s, true);
    }
    if (amx_tiles_in_function_) {
      // The shape the function's AMX tiles took in this call (ingot_amx_configure): within it only its own tiles run
      // on this thread. A thread_local instead made LeakSanitizer fault at exit, after the library was unloaded.
      const std::string indent(2 * size_t(indent_), ' ');
      const std::vector<std::string> taken{kAmxGuard, indent + "const ingot_amx_tiles* ingot_amx_taken = nullptr;",
                                           "#endif"};
      body_.insert(body_.begin() + std::ptrdiff_t(first_line), taken.begin(), taken.end());
    }
    amx_tiles_in_function_ = saved_amx;
    close();
    StageFunction f{std::move(body_), std::move(vectorized_body_lines_)};
    body_ = std::move(saved_body);
    vectorized_body_lines_ = std::move(saved_vectorized);
    buffers_ = std::move(saved_buffers);
    names_ = std::move(saved_names);
    indent_ = saved_indent;
    return f;
  }

  void print_stage_call(const Stmt& s) {
    auto [params, written] = stmt_buffers(s);
    for (const Buffer& b : params) lookup(b);  // fails clearly on an unknown buffer or a dtype mismatch
    std::string key;
    for (const std::string& line : print_stage_function(s, "f", params, written, true).lines) key += line + "\n";
    auto [it, is_new] = stage_function_names_.emplace(key, "ingot_stage_" + std::to_string(stage_functions_.size()));
    if (is_new) stage_functions_.push_back(print_stage_function(s, it->second, params, written, false));
    std::string args;
    for (const Buffer& b : params) args += (args.empty() ? "" : ", ") + buffers_.at(b->name).c_name;
    emit(it->second + "(" + args + ");");
  }

  // A kernel of a function with several: its parallel region as a function, shared by kernels that differ only
  // in their buffers (a model run one kernel per operator repeats a few kernels thousands of times).
  void print_kernel_call(const Stmt& kernel) {
    auto [params, written] = stmt_buffers(kernel);
    std::string key;
    for (const std::string& line : print_stage_function(kernel, "f", params, written, true, true).lines)
      key += line + "\n";
    auto [it, is_new] =
        kernel_function_names_.emplace(key, "ingot_kernel_" + std::to_string(kernel_function_names_.size()));
    if (is_new) stage_functions_.push_back(print_stage_function(kernel, it->second, params, written, false, true));
    std::string args;
    for (const Buffer& b : params) args += (args.empty() ? "" : ", ") + buffers_.at(b->name).c_name;
    emit(it->second + "(" + args + ");");
  }

  // Code that every thread of the parallel region reaches: stages, barriers, and allocations around them.
  void print_region(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kSeq: {
        const auto& stmts = as<SeqNode>(s)->stmts;
        // Consecutive single-thread statements run in one `omp single`, in order, as on a GPU where they all
        // run on thread 0 of block 0.
        for (size_t i = 0; i < stmts.size();) {
          if (is_region_structure(stmts[i])) {
            print_region(stmts[i++]);
            continue;
          }
          size_t end = i;
          while (end < stmts.size() && (!is_region_structure(stmts[end]) || is_block_barrier(stmts[end]))) ++end;
          print_single(std::vector<Stmt>(stmts.begin() + i, stmts.begin() + end));
          i = end;
        }
        return;
      }
      case StmtKind::kAllocate:
        print_allocate(as<AllocateNode>(s), false, [&](const Stmt& b) { print_region(b); });
        return;
      case StmtKind::kBarrier:
        if (as<BarrierNode>(s)->barrier_kind == BarrierKind::kGrid) {
          emit("#pragma omp barrier");
          emit_profile_mark();
        }
        if (as<BarrierNode>(s)->barrier_kind == BarrierKind::kKernel)
          fail("kernel barrier inside an allocation of function '" + f_.name +
               "' (kernel barriers may only separate top-level stages)");
        return;
      case StmtKind::kFor:
        if (loop_is_parallel(as<ForNode>(s)->loop_kind)) {
          print_stage_call(s);
          return;
        }
        break;
      case StmtKind::kPrefetch: print_prefetch(as<PrefetchNode>(s)); return;
      default: break;
    }
    print_single({s});
  }

  // Profile marks (CppPrintOptions::profile): thread 0 notes the time where a kernel's region starts, after each grid
  // barrier and, after one more barrier, where the region ends, so that consecutive marks bound one stage interval.
  void emit_profile_mark() {
    if (options_.profile) emit("ingot_profile_mark();");
  }
  void emit_region_end_mark() {
    if (!options_.profile) return;
    emit("#pragma omp barrier");
    emit("ingot_profile_mark();");
  }

  // Each thread prefetches into its L2 the lines a static schedule gives it: the share of a weight's rows that the
  // next stage's `omp for schedule(static)` over those rows gives the same thread. nowait: a thread that is done
  // fetches while the others finish the current stage.
  void print_prefetch(const PrefetchNode* p) {
    const BufferInfo& info = lookup(p->buffer);
    int64_t bytes = p->buffer->num_elements() * dtype_bytes(p->buffer->dtype);
    emit("#pragma omp for schedule(static) nowait");
    emit("for (int64_t ingot_line = 0; ingot_line < " +
         std::to_string((bytes + kCacheLineBytes - 1) / kCacheLineBytes) + "; ++ingot_line)");
    emit("  __builtin_prefetch(reinterpret_cast<const char*>(" + info.c_name + ") + ingot_line * " +
         std::to_string(kCacheLineBytes) + ", 0, 2);  // read, into L2");
  }

  static bool is_block_barrier(const Stmt& s) {
    auto* b = as<BarrierNode>(s);
    return b && b->barrier_kind == BarrierKind::kBlock;
  }

  void print_single(const std::vector<Stmt>& stmts) {
    emit("#pragma omp single nowait");
    open("{");
    for (const Stmt& s : stmts)
      if (!is_block_barrier(s)) print_stage_call(s);
    close();
  }

  void print_run_body() {
    bool uses_args = false, uses_workspace = false;
    for (const auto* list : {&f_.inputs, &f_.outputs})
      for (const Buffer& b : *list) uses_args |= used_.count(b->name) > 0;
    for (const Buffer& b : f_.workspace) uses_workspace |= used_.count(b->name) > 0;
    if (!uses_args) emit("(void)args;");
    if (!uses_workspace) emit("(void)workspace;");
    // One parallel region per kernel: a kernel barrier ends the region, as a kernel launch ends on a GPU.
    std::vector<Stmt> kernels = kernel_bodies(f_.body);
    if (kernels.size() > 1) {
      print_pointer_declarations(f_.body);
      for (const Stmt& kernel : kernels) print_kernel_call(kernel);
      return;
    }
    for (const Stmt& kernel : kernels) {
      emit("#pragma omp parallel");
      open("{");
      emit("const ingot_flush_denormals ingot_denormals_flushed;");
      print_pointer_declarations(kernel);
      emit_profile_mark();
      print_region(kernel);
      emit_region_end_mark();
      close();
    }
  }

  // Pointers are declared inside each region (see pointer_decl). Buffers the body never touches get no pointer:
  // a model run as one kernel per operator has thousands of regions.
  void print_pointer_declarations(const Stmt& kernel) {
    std::set<std::string> used;
    for (const Buffer& b : stmt_buffers(kernel).used) used.insert(b->name);
    int arg = 0;
    for (const Buffer& b : f_.inputs) {
      bool read_only = !stored_.count(b->name);
      if (used.count(b->name))
        emit(pointer_decl(b, read_only) + " = static_cast<" + (read_only ? "const " : "") + c_type(b->dtype, "") +
             "*>(args[" + std::to_string(arg) + "]);");
      ++arg;
    }
    for (const Buffer& b : f_.outputs) {
      if (used.count(b->name))
        emit(pointer_decl(b, false) + " = static_cast<" + c_type(b->dtype, "") + "*>(args[" + std::to_string(arg) +
             "]);");
      ++arg;
    }
    CppWorkspaceLayout layout = cpp_workspace_layout(f_);
    for (size_t i = 0; i < f_.workspace.size(); ++i) {
      const Buffer& b = f_.workspace[i];
      if (used.count(b->name))
        emit(pointer_decl(b, false) + " = reinterpret_cast<" + c_type(b->dtype, "") +
             "*>(static_cast<char*>(workspace) + " + std::to_string(layout.offsets[i]) + ");");
    }
  }

  PrintedCpp assemble() {
    std::vector<std::string> head;
    head.push_back("// ingot CPU kernel '" + f_.name + "', generated from its loop IR by the C++ printer.");
    head.push_back("// C ABI version " + std::to_string(kCppKernelAbiVersion) +
                   ": ingot_run(args, workspace) with args = inputs then outputs:");
    int arg = 0;
    auto describe = [&](const Buffer& b, const char* role) {
      std::string shape;
      for (size_t i = 0; i < b->shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(b->shape[i]);
      return std::string(dtype_name(b->dtype)) + "[" + shape + "] " + b->name + " (" + role + ")";
    };
    for (const Buffer& b : f_.inputs)
      head.push_back("//   args[" + std::to_string(arg++) + "]: " + describe(b, "input"));
    for (const Buffer& b : f_.outputs)
      head.push_back("//   args[" + std::to_string(arg++) + "]: " + describe(b, "output"));
    CppWorkspaceLayout layout = cpp_workspace_layout(f_);
    head.push_back("// workspace: " + std::to_string(layout.total_bytes) + " bytes, 64-byte aligned");
    for (size_t i = 0; i < f_.workspace.size(); ++i)
      head.push_back("//   +" + std::to_string(layout.offsets[i]) + ": " + describe(f_.workspace[i], "workspace"));
    head.push_back("");
    for (const char* inc : {"cmath", "cstdint", "cstdlib", "cstring", "omp.h"})
      head.push_back(std::string("#include <") + inc + ">");
    push_denormal_flush(head);
    if (options_.profile) push_profile_marks(head);
    bool any_vectorized = !vectorized_body_lines_.empty();
    for (const StageFunction& f : stage_functions_) any_vectorized |= !f.vectorized.empty();
    if (any_vectorized) {
      // Otherwise g++ turns simple simd loops (zero-fill, copy) into memset/memcpy calls, which cost more
      // than inline vector code for the small tiles that lowering vectorizes.
      head.push_back("#if defined(__GNUC__) && !defined(__clang__)");
      head.push_back("#pragma GCC optimize(\"no-tree-loop-distribute-patterns\")");
      head.push_back("#endif");
    }
    if (vector_lanes_ == kAvx512VectorLanes) {
      head.push_back("");
      head.push_back("// Register tiles as explicit vectors where AVX-512 has the registers for them (zmm, 16 lanes).");
      head.push_back("#if defined(__AVX512F__)");
      head.push_back("#include <immintrin.h>");
      head.push_back("#define INGOT_F32_LANES 16");
      head.push_back("typedef float ingot_f32xN __attribute__((vector_size(INGOT_F32_LANES * 4)));");
      push_plain_vector_load(head);
      // A tree of halves: a chain of 16 dependent adds cost more than a GEMV's dot product, and halves taken through
      // memcpy kept a Swin GEMM's accumulators on the stack.
      head.push_back("static inline float ingot_sum_f32xN(ingot_f32xN v) { return _mm512_reduce_add_ps(v); }");
      head.push_back(
          "// The sums of a, b, c and d into s[0..3]: pairs interleaved and added within each 128-bit block, then the "
          "blocks.");
      head.push_back(
          "static inline void ingot_sum4_f32xN(ingot_f32xN a, ingot_f32xN b, ingot_f32xN c, ingot_f32xN d, float* s) "
          "{");
      head.push_back(
          "  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps((__m512)a, (__m512)b), _mm512_unpackhi_ps((__m512)a, "
          "(__m512)b));");
      head.push_back(
          "  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps((__m512)c, (__m512)d), _mm512_unpackhi_ps((__m512)c, "
          "(__m512)d));");
      head.push_back(
          "  const __m512 abcd = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, 0x44), _mm512_shuffle_ps(ab, cd, 0xEE));");
      head.push_back(
          "  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(abcd), "
          "_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(abcd), 1)));");
      head.push_back("  _mm_storeu_ps(s, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));");
      head.push_back("}");
      // Masked lanes are neither read nor written, so a chunk may end past a row or start before a padded border.
      head.push_back("static inline ingot_f32xN ingot_load_masked_f32xN(__mmask16 m, const float* p) {");
      head.push_back("  ingot_f32xN v = (ingot_f32xN)_mm512_maskz_loadu_ps(m, p);");
      head.push_back("  __asm__(\"\" : \"+v\"(v));");
      head.push_back("  return v;");
      head.push_back("}");
      push_lane_arithmetic(head);
      if (strided_accumulators_) push_strided_accumulators(head);
      head.push_back("static inline __mmask16 ingot_lane_range(int64_t lo, int64_t hi) {");
      head.push_back("  return (__mmask16)ingot_bit_range(lo, hi, 16);");
      head.push_back("}");
      // Lanes lo .. hi - 1 of a stride-2 window are its even elements 2 lo .. 2 hi - 2, from two vectors.
      head.push_back("static inline ingot_f32xN ingot_load_even_f32xN(int64_t lo, int64_t hi, const float* p) {");
      head.push_back(
          "  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);");
      head.push_back("  uint32_t m = ingot_bit_range(2 * lo, 2 * hi - 1, 32);");
      head.push_back(
          "  ingot_f32xN v = (ingot_f32xN)_mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)m, p), even,");
      head.push_back(
          "                                                      _mm512_maskz_loadu_ps((__mmask16)(m >> 16), p + "
          "16));");
      head.push_back("  __asm__(\"\" : \"+v\"(v));");
      head.push_back("  return v;");
      head.push_back("}");
      head.push_back("static inline void ingot_store_masked_f32xN(__mmask16 m, float* p, ingot_f32xN v) {");
      head.push_back("  _mm512_mask_storeu_ps(p, m, (__m512)v);");
      head.push_back("}");
      head.push_back("#endif");
      if (bf16_pair_tiles_) {
        // A pair of bf16 (k and k + 1) in every 32-bit lane, for vdpbf16ps: as stored, or rounded from two floats.
        head.push_back(kBf16Guard);
        head.push_back("static inline __m512i ingot_pair_bf16(const uint16_t* p) {");
        head.push_back("  int32_t pair;");
        head.push_back("  std::memcpy(&pair, p, 4);");
        head.push_back("  return _mm512_set1_epi32(pair);");
        head.push_back("}");
        head.push_back("static inline __m512i ingot_pair_bf16_of_f32(const float* p) {");
        head.push_back(
            "  const __m128bh pair = _mm_cvtneps_pbh(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(p))));");
        head.push_back("  return _mm512_broadcastd_epi32((__m128i)pair);");
        head.push_back("}");
        head.push_back("#endif");
      }
      if (amx_pair_tiles_) {
        head.push_back(kAmxGuard);
        head.push_back("#include <cpuid.h>");
        head.push_back("#include <sys/syscall.h>");
        head.push_back("#include <unistd.h>");
        head.push_back(
            "// LDTILECFG's operand: palette 1, then the bytes per row and the rows of each of the 8 tiles.");
        head.push_back("struct alignas(64) ingot_amx_tiles {");
        head.push_back("  uint8_t palette, start_row, reserved[14];");
        head.push_back("  uint16_t colsb[16];");
        head.push_back("  uint8_t rows[16];");
        head.push_back("};");
        head.push_back(
            "// Whether the CPU has AMX-BF16 and Linux lets this process use AMX's tile data (ARCH_REQ_XCOMP_PERM for "
            "XFEATURE_XTILEDATA), asked once.");
        head.push_back("static bool ingot_amx_ready() {");
        head.push_back("  static const bool ready = [] {");
        head.push_back("    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // CPUID.(7, 0):EDX bit 22: AMX-BF16");
        head.push_back("    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && ((edx >> 22) & 1u) &&");
        head.push_back("           syscall(SYS_arch_prctl, 0x1023, 18) == 0;");
        head.push_back("  }();");
        head.push_back("  return ready;");
        head.push_back("}");
        head.push_back(
            "// This thread's tiles take the shape unless they have it: taken in this call of the stage's function "
            "(*taken), or found by STTILECFG and a compare (a tenth of LDTILECFG, but BERT's FFN GEMM spent 9% "
            "there).");
        head.push_back(
            "static inline void ingot_amx_configure(const ingot_amx_tiles* shape, const ingot_amx_tiles** taken) {");
        head.push_back("  if (*taken == shape) return;");
        head.push_back("  ingot_amx_tiles now;");
        head.push_back("  _tile_storeconfig(&now);");
        head.push_back("  if (std::memcmp(&now, shape, sizeof now) != 0) _tile_loadconfig(shape);");
        head.push_back("  *taken = shape;");
        head.push_back("}");
        head.push_back("// 32 bf16 of a row: rounded from f32 (to nearest even, as ingot_f32_to_bf16), or as stored.");
        head.push_back("static inline void ingot_bf16x32_of_f32(uint16_t* to, const float* from) {");
        head.push_back(
            "  _mm512_store_si512(to, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(from + 16), "
            "_mm512_loadu_ps(from)));");
        head.push_back("}");
        head.push_back("static inline void ingot_bf16x32(uint16_t* to, const uint16_t* from) {");
        head.push_back("  _mm512_store_si512(to, _mm512_loadu_si512(from));");
        head.push_back("}");
        head.push_back("#endif");
      }
    } else if (vector_lanes_ == kAvx2VectorLanes) {
      push_avx2_helpers(head);
    }
    if (vector_maps_) push_vector_map_helpers(head, map_lanes_, scattering_vector_maps_);
    if (pair_maps_) push_pair_map_helpers(head);
    if (!vector_math_.empty()) {
      // Without these declarations a simd loop that calls logf runs scalar. libmvec has logf since glibc 2.22, within
      // 4 ulp of glibc's scalar one (exp, tanh and erf are ingot's own helpers).
      head.push_back("");
      head.push_back("#if defined(INGOT_LIBMVEC)  // glibc's SIMD math (libmvec), linked with -lmvec");
      for (const std::string& fn : vector_math_) {
        head.push_back("#pragma omp declare simd notinbranch");
        head.push_back("extern \"C\" float " + fn + "(float);");
      }
      head.push_back("#endif");
    }
    if (!helpers_.empty()) {
      head.push_back("");
      head.push_back(
          "// Helpers: integer / and % round toward negative infinity; min and max pick as std::min and std::max do.");
      for (auto [h, t] : helpers_) {
        std::string def = helper_definition(h, t);
        for (size_t start = 0;;) {
          size_t nl = def.find('\n', start);
          head.push_back(def.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
          if (nl == std::string::npos) break;
          start = nl + 1;
        }
      }
    }
    head.push_back("");
    head.push_back("extern \"C\" int ingot_abi_version(void) { return " + std::to_string(kCppKernelAbiVersion) + "; }");
    head.push_back("extern \"C\" int ingot_num_inputs(void) { return " + std::to_string(f_.inputs.size()) + "; }");
    head.push_back("extern \"C\" int ingot_num_outputs(void) { return " + std::to_string(f_.outputs.size()) + "; }");
    head.push_back("extern \"C\" int64_t ingot_workspace_bytes(void) { return " + std::to_string(layout.total_bytes) +
                   "; }");
    head.push_back("");
    head.push_back("extern \"C\" void ingot_run(void* const* args, void* workspace) {");

    PrintedCpp out;
    // Stage functions go before ingot_run, which calls them.
    std::vector<std::string> lines;
    const size_t run_line = head.size() - 1;
    lines.insert(lines.end(), head.begin(), head.end() - 1);
    for (const StageFunction& f : stage_functions_) {
      int offset = int(lines.size()) + 1;
      for (SourceLines l : f.vectorized) out.vectorized_loops.push_back({l.first + offset, l.last + offset});
      lines.insert(lines.end(), f.lines.begin(), f.lines.end());
      lines.push_back("");
    }
    lines.push_back(head[run_line]);
    int offset = int(lines.size()) + 1;
    for (SourceLines l : vectorized_body_lines_) out.vectorized_loops.push_back({l.first + offset, l.last + offset});
    lines.insert(lines.end(), body_.begin(), body_.end());
    lines.push_back("}");
    for (const std::string& l : lines) out.source += l + "\n";
    return out;
  }

  const LoopFunction& f_;
  const CppPrintOptions options_;
  NameTable names_;
  std::map<std::string, BufferInfo> buffers_;    // IR name -> declaration in scope
  std::set<std::string> stored_;                 // IR names of buffers the body writes
  std::set<std::string> used_;                   // IR names of buffers the body reads or writes
  std::map<std::string, int> bound_vars_;        // IR name -> number of enclosing loops binding it
  std::vector<const ForNode*> enclosing_loops_;  // around the code being printed, outermost first
  std::set<std::pair<Helper, DType>> helpers_;
  std::set<std::string> vector_math_;  // libm functions the code calls that libmvec has in SIMD form
  bool fma_from_memory_ = false;       // an AVX2 tile reads an operand from memory in its FMAs
  bool strided_accumulators_ = false;  // a spatial tile scatters its accumulators (and gathers them unless zeroed)
  std::vector<std::string> body_;
  std::vector<SourceLines> vectorized_body_lines_;  // 0-based indices into body_
  const StoreNode* accumulator_ = nullptr;          // inside a simd reduction: its element prints as the accumulator
  std::string vector_loop_var_;  // inside an explicit-vector loop: loads that move with this variable print as vectors
  std::vector<Expr> vector_operands_;  // those loads, distinct, in order: vector_operands_[i] prints as ingot_v<i>
  std::vector<std::pair<Expr, std::string>> hoisted_loads_;  // loads read once before a simd loop, and their names
  int hoisted_load_count_ = 0;
  bool amx_pair_tiles_ = false;             // an AMX pair tile was printed: the head defines its tile helpers
  bool amx_tiles_in_function_ = false;      // one was printed in the stage function being printed
  bool bf16_pair_tiles_ = false;            // a bf16 pair tile was printed: the head defines its pair helpers
  bool printing_spatial_fallback_ = false;  // the loops of a spatial tile, for machines without AVX-512
  int64_t map_lanes_ = kAvx512VectorLanes;  // vector maps' lanes: AVX2's where the register tiles are, else AVX-512's
  bool vector_maps_ = false;                // a vector map was printed: the head defines its helpers
  bool scattering_vector_maps_ = false;     // ... and one scattered its store
  bool pair_maps_ = false;                  // a pair map was printed: the head defines its helpers
  bool vector_map_ = false;                 // printing a vector map's value
  bool printing_vector_map_fallback_ = false;      // its `omp simd` loop, for machines without AVX-512
  int64_t vector_lanes_ = 0;                       // lanes of the explicit vectors printed so far; 0 = none
  std::vector<std::string> inline_operand_loads_;  // per vector operand: its load, printed where it is read, or ""
  std::string accumulator_name_;
  std::map<std::string, std::string> stage_function_names_;   // canonical text -> function name
  std::vector<StageFunction> stage_functions_;                // stage and kernel functions, callees first
  std::map<std::string, std::string> kernel_function_names_;  // canonical text -> function name
  int indent_ = 1;
};

}  // namespace

CppWorkspaceLayout cpp_workspace_layout(const LoopFunction& f) {
  CppWorkspaceLayout layout;
  int64_t end = 0;
  for (const Buffer& b : f.workspace) {
    int64_t offset = round_up(end, kWorkspaceAlignment);
    layout.offsets.push_back(offset);
    end = offset + b->num_elements() * dtype_bytes(b->dtype);
  }
  layout.total_bytes = round_up(end, kWorkspaceAlignment);
  return layout;
}

PrintedCpp print_cpp_with_lines(const LoopFunction& f, const CppPrintOptions& options) {
  return CppPrinter(f, options).print();
}

std::string print_cpp(const LoopFunction& f, const CppPrintOptions& options) {
  return print_cpp_with_lines(f, options).source;
}

}  // namespace ingot
