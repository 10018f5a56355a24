#include "codegen/cuda_printer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "ir/functor.h"
#include "lower/kernels.h"

namespace ingot {

namespace {

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr std::array<int64_t, 3> kMaxBlockDim{1024, 1024, 64};
constexpr std::array<int64_t, 3> kMaxGridDim{2147483647, 65535, 65535};

std::string fail_prefix(const LoopFunction& f) { return "CUDA printer, function '" + f.name + "': "; }

const char* c_type(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "int";
    case DType::kInt64: return "long long";
    case DType::kFloat32: return "float";
    case DType::kFloat16:
    case DType::kBFloat16: break;
  }
  throw std::invalid_argument(std::string("CUDA printer: ") + dtype_name(t) + " is not supported yet");
}

int dim_of(LoopKind k) {
  switch (k) {
    case LoopKind::kBlockX:
    case LoopKind::kThreadX: return 0;
    case LoopKind::kBlockY:
    case LoopKind::kThreadY: return 1;
    case LoopKind::kBlockZ:
    case LoopKind::kThreadZ: return 2;
    default: return -1;
  }
}
const char* dim_letter(int d) { return d == 0 ? "x" : d == 1 ? "y" : "z"; }

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v_" + out;
  return out;
}

// Identifiers the kernel body cannot take for its own names: C++ keywords, CUDA built-ins and the functions
// the printed code calls (a variable named `min` would hide the function).
bool is_reserved(const std::string& id) {
  static const std::set<std::string> words = {"alignas",      "alignof",
                                              "and",          "and_eq",
                                              "asm",          "auto",
                                              "bitand",       "bitor",
                                              "bool",         "break",
                                              "case",         "catch",
                                              "char",         "char16_t",
                                              "char32_t",     "class",
                                              "compl",        "const",
                                              "constexpr",    "const_cast",
                                              "continue",     "decltype",
                                              "default",      "delete",
                                              "do",           "double",
                                              "dynamic_cast", "else",
                                              "enum",         "explicit",
                                              "export",       "extern",
                                              "false",        "float",
                                              "for",          "friend",
                                              "goto",         "if",
                                              "inline",       "int",
                                              "long",         "mutable",
                                              "namespace",    "new",
                                              "noexcept",     "not",
                                              "not_eq",       "nullptr",
                                              "operator",     "or",
                                              "or_eq",        "private",
                                              "protected",    "public",
                                              "register",     "reinterpret_cast",
                                              "return",       "short",
                                              "signed",       "sizeof",
                                              "static",       "static_assert",
                                              "static_cast",  "struct",
                                              "switch",       "template",
                                              "this",         "thread_local",
                                              "throw",        "true",
                                              "try",          "typedef",
                                              "typeid",       "typename",
                                              "union",        "unsigned",
                                              "using",        "virtual",
                                              "void",         "volatile",
                                              "wchar_t",      "while",
                                              "xor",          "xor_eq",
                                              "threadIdx",    "blockIdx",
                                              "blockDim",     "gridDim",
                                              "warpSize",     "min",
                                              "max",          "abs",
                                              "llabs",        "fabsf",
                                              "expf",         "logf",
                                              "tanhf",        "sqrtf",
                                              "rsqrtf",       "erff",
                                              "powf",         "fminf",
                                              "fmaxf",        "cooperative_groups",
                                              "main"};
  return words.count(id) || id.rfind("ingot_", 0) == 0 || id.rfind("__", 0) == 0;
}

// Maps IR names (variables and buffers live in separate IR namespaces) to distinct C identifiers. A canonical
// table names everything by order of first use instead (b0, v1, ...), so that two statements that differ only
// in names print the same text.
class NameTable {
 public:
  explicit NameTable(bool canonical = false) : canonical_(canonical) {}
  std::string var(const std::string& name) { return get("v:" + name, name); }
  std::string buffer(const std::string& name) { return get("b:" + name, name); }
  void reserve(const std::string& id) { used_.insert(id); }

 private:
  std::string get(const std::string& key, const std::string& name) {
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    if (canonical_) return ids_[key] = key.substr(0, 1) + std::to_string(ids_.size());
    std::string base = sanitize(name);
    if (is_reserved(base)) base += "_";
    std::string id = base;
    for (int n = 1; used_.count(id); ++n) id = base + "_" + std::to_string(n);
    used_.insert(id);
    return ids_[key] = id;
  }
  bool canonical_;
  std::map<std::string, std::string> ids_;
  std::set<std::string> used_;
};

bool contains(const Stmt& s, const std::function<bool(const Stmt&)>& pred) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) { found = found || pred(x); });
  return found;
}
bool has_barrier(const Stmt& s) {
  return contains(s, [](const Stmt& x) { return x->kind == StmtKind::kBarrier; });
}
bool has_loop_of(const Stmt& s, bool (*kind_pred)(LoopKind)) {
  return contains(s, [&](const Stmt& x) {
    auto* f = as<ForNode>(x);
    return f && kind_pred(f->loop_kind);
  });
}

bool touches_shared_memory(const Stmt& s) {
  bool found = false;
  auto scan = [&](const Expr& e) {
    for_each_node(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) found = found || l->buffer->scope == MemoryScope::kShared;
    });
    return e;
  };
  map_exprs(s, scan);
  return found || contains(s, [](const Stmt& x) {
           auto* st = as<StoreNode>(x);
           auto* al = as<AllocateNode>(x);
           return (st && st->buffer->scope == MemoryScope::kShared) ||
                  (al && al->buffer->scope == MemoryScope::kShared);
         });
}

bool ends_with_block_barrier(const Stmt& s);

// A loop that all threads of a block run, whose body shares memory between its thread loops, must not
// start its next iteration (overwriting shared memory) while slower threads still read this one's: that
// happens whenever the launch is smaller than the loop nest. Lowering may already end the body with a
// block barrier; otherwise the printer adds one, where every thread of the block reaches it.
bool needs_trailing_sync(const ForNode& n, bool thread_bound) {
  return !thread_bound && n.extent > 1 && !is_gpu_thread(n.loop_kind) && has_loop_of(n.body, is_gpu_thread) &&
         touches_shared_memory(n.body) && !ends_with_block_barrier(n.body);
}

// Whether the last statement s executes is a block barrier, written or added by needs_trailing_sync.
bool ends_with_block_barrier(const Stmt& s) {
  if (auto* q = as<SeqNode>(s)) return !q->stmts.empty() && ends_with_block_barrier(q->stmts.back());
  if (auto* a = as<AllocateNode>(s)) return ends_with_block_barrier(a->body);
  if (auto* f = as<ForNode>(s)) return ends_with_block_barrier(f->body) || needs_trailing_sync(*f, false);
  auto* b = as<BarrierNode>(s);
  return b && b->barrier_kind == BarrierKind::kBlock;
}

// Where a statement runs: whether it is already restricted to (or distributed over) blocks and threads.
// A statement that is neither inside a block loop nor under a block-0 guard would run in every block.
struct Placement {
  bool block_bound = false;
  bool thread_bound = false;
};

class CudaPrinter {
 public:
  // A canonical printer names buffers and variables by order of first use. kernel_name, where not empty, replaces
  // the function's own name as the kernel's (print_cuda_canonical passes `ingot_kernel` unless told another).
  CudaPrinter(const LoopFunction& f, bool canonical, std::string kernel_name)
      : f_(f), names_(canonical), canonical_(canonical), kernel_name_(std::move(kernel_name)) {}

  std::string print() {
    CudaLaunchConfig launch = cuda_launch_config(f_);
    if (kernel_name_.empty()) kernel_name_ = launch.kernel_name;
    launch.kernel_name = kernel_name_;
    names_.reserve(launch.kernel_name);
    std::string params = parameters();
    emit_body();

    std::ostringstream os;
    os << "// Generated by ingot from "
       << (canonical_ ? std::string("a LoopFunction") : "LoopFunction '" + f_.name + "'") << ".\n";
    if (uses_grid_sync_) os << "#include <cooperative_groups.h>\n";
    os << "\n" << helpers();
    for (const std::string& function : stage_functions_) os << function << "\n";
    os << "extern \"C\" __global__ void __launch_bounds__(" << launch.threads_per_block() << ") " << launch.kernel_name
       << "(" << params << ") {\n"
       << body_.str() << "}\n";
    return os.str();
  }

 private:
  std::string parameters() {
    std::ostringstream os;
    std::set<std::string> seen;
    auto add = [&](const Buffer& b, bool read_only) {
      if (!b) throw std::invalid_argument(fail_prefix(f_) + "null argument buffer");
      if (b->scope != MemoryScope::kGlobal)
        throw std::invalid_argument(fail_prefix(f_) + "argument '" + b->name + "' is not a global buffer");
      if (!seen.insert(b->name).second)
        throw std::invalid_argument(fail_prefix(f_) + "buffer '" + b->name +
                                    "' is passed twice; aliased inputs break __restrict__");
      if (read_only) inputs_.insert(b->name);
      known_buffers_.insert(b->name);
      // Inputs are read-only for the whole kernel (`const __restrict__` lets nvcc use the read-only cache); other
      // buffers are written and read across grid barriers, so nothing may assume they do not change (as in the C++
      // printer, docs/loop_semantics.md).
      os << (seen.size() > 1 ? ", " : "") << (read_only ? "const " : "") << c_type(b->dtype)
         << (read_only ? "* __restrict__ " : "* ") << names_.buffer(b->name);
    };
    for (const Buffer& b : f_.inputs) add(b, true);
    for (const Buffer& b : f_.outputs) add(b, false);
    for (const Buffer& b : f_.workspace) add(b, false);
    return os.str();
  }

  // The kernel's statements. A top-level stage that repeats with other buffers (every cell of an unrolled LSTM)
  // is printed once as a __device__ function and called: a whole-model kernel of thousands of stages
  // otherwise takes NVRTC more than ten minutes to compile.
  void emit_body() {
    auto* top = as<SeqNode>(f_.body);
    if (!top) return emit_stmt(f_.body, Placement{}, 1);
    std::vector<std::string> keys;
    std::map<std::string, int> repeats;
    for (const Stmt& s : top->stmts) {
      keys.push_back(outlinable(s) ? stage_function(s, "f", true) : "");
      if (!keys.back().empty()) ++repeats[keys.back()];
    }
    bool any_repeated = false;
    for (const auto& [key, count] : repeats) any_repeated |= count > 1;
    if (!any_repeated) return emit_stmt(f_.body, Placement{}, 1);
    for (size_t i = 0; i < top->stmts.size(); ++i) {
      const Stmt& s = top->stmts[i];
      if (keys[i].empty() || repeats[keys[i]] < 2) {
        emit_stmt(s, Placement{}, 1);
        continue;
      }
      auto [it, is_new] = stage_function_names_.emplace(
          keys[i], kernel_name_ + "_stage_" + std::to_string(stage_function_names_.size()));
      if (is_new) stage_functions_.push_back(stage_function(s, it->second, false));
      std::string args;
      for (const Buffer& b : stmt_buffers(s).used) args += (args.empty() ? "" : ", ") + buffer_name(b);
      line(1, it->second + "(" + args + ");");
    }
  }

  // A stage may become a function when every thread reaches it at the top level and it holds no grid barrier.
  static bool outlinable(const Stmt& s) {
    if (s->kind == StmtKind::kBarrier) return false;
    return !contains(s, [](const Stmt& x) {
      auto* b = as<BarrierNode>(x);
      return b && b->barrier_kind != BarrierKind::kBlock;
    });
  }

  // The stage as `__device__ __noinline__ void name(buffers...)`, its parameters the global buffers it uses in
  // order of first use; with canonical names, the text is the same for stages that differ only in names.
  std::string stage_function(const Stmt& s, const std::string& name, bool canonical) {
    StmtBuffers buffers = stmt_buffers(s);
    std::ostringstream saved_body = std::move(body_);
    NameTable saved_names = std::move(names_);
    std::set<std::string> saved_inputs = std::move(inputs_), saved_known = known_buffers_;
    body_ = std::ostringstream();
    names_ = NameTable(canonical || canonical_);
    inputs_.clear();
    std::string signature;
    for (const Buffer& b : buffers.used) {
      if (!saved_known.count(b->name))
        throw std::invalid_argument(fail_prefix(f_) + "buffer '" + b->name +
                                    "' is used outside any Allocate and is not an argument or workspace");
      bool read_only = !buffers.written.count(b->name);
      if (!read_only && saved_inputs.count(b->name))
        throw std::invalid_argument(fail_prefix(f_) + "store into input buffer '" + b->name + "'");
      if (read_only) inputs_.insert(b->name);
      // Only the kernel's inputs are read-only for its whole run. A buffer that an earlier stage of the kernel wrote
      // must not be `const __restrict__` here: nvcc may then read it through the non-coherent read-only cache
      // (ld.global.nc), which can return data from before the grid barrier. Calls that differ in this print
      // different functions.
      bool kernel_input = read_only && saved_inputs.count(b->name);
      signature += std::string(signature.empty() ? "" : ", ") + (read_only ? "const " : "") + c_type(b->dtype) +
                   (kernel_input ? "* __restrict__ " : "* ") + names_.buffer(b->name);
    }
    line(0, "__device__ __noinline__ void " + name + "(" + signature + ") {");
    emit_stmt(s, Placement{}, 1);
    line(0, "}");
    std::string text = body_.str();
    body_ = std::move(saved_body);
    names_ = std::move(saved_names);
    inputs_ = std::move(saved_inputs);
    known_buffers_ = std::move(saved_known);
    return text;
  }

  std::string helpers() const {
    std::string out;
    if (uses_grid_sync_) {
      // Out of line: inlined, a kernel with a thousand grid barriers took NVRTC minutes to compile.
      out +=
          "#ifndef INGOT_CUDA_GRID_SYNC\n"
          "#define INGOT_CUDA_GRID_SYNC\n"
          "__device__ __noinline__ void ingot_grid_sync() { cooperative_groups::this_grid().sync(); }\n"
          "#endif\n";
    }
    if (uses_block0_ || uses_thread0_) {
      out +=
          "#ifndef INGOT_CUDA_PLACEMENT_HELPERS\n"
          "#define INGOT_CUDA_PLACEMENT_HELPERS\n"
          "__device__ __forceinline__ bool ingot_block0() { return blockIdx.x == 0 && blockIdx.y == 0 && "
          "blockIdx.z == 0; }\n"
          "__device__ __forceinline__ bool ingot_thread0() { return threadIdx.x == 0 && threadIdx.y == 0 && "
          "threadIdx.z == 0; }\n"
          "#endif\n";
    }
    if (uses_floor_div_mod_) {
      // Integer / and % of the IR round toward negative infinity; C++ truncates toward zero.
      out += "#ifndef INGOT_CUDA_FLOOR_HELPERS\n#define INGOT_CUDA_FLOOR_HELPERS\n";
      for (const char* t : {"int", "long long"}) {
        out += std::string("__device__ __forceinline__ ") + t + " ingot_floordiv(" + t + " a, " + t + " b) { " + t +
               " q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n";
        out += std::string("__device__ __forceinline__ ") + t + " ingot_floormod(" + t + " a, " + t + " b) { " + t +
               " r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";
      }
      out += "#endif\n";
    }
    if (!out.empty()) out += "\n";
    return out;
  }

  // ---- expressions ----

  static std::string int_literal(int64_t v, DType t) {
    if (t == DType::kBool) return v ? "true" : "false";
    if (t == DType::kInt32) {
      if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    }
    if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
    bool fits_int = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    std::string text = std::to_string(v) + (fits_int ? "" : "LL");
    return v < 0 ? "(" + text + ")" : text;
  }

  static std::string float_literal(double v) {
    if (std::isnan(v)) return "__int_as_float(0x7fffffff)";
    if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
    std::string text = format_double(v) + "f";
    return v < 0 || (v == 0 && std::signbit(v)) ? "(" + text + ")" : text;
  }

  // Whether the printed form of an i64 expression has C type long long (a small literal prints as int).
  static bool prints_as_long_long(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        int64_t v = e.as<IntImmNode>()->value;
        return v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max();
      }
      case ExprKind::kSelect:
        return prints_as_long_long(e.as<SelectNode>()->true_value) ||
               prints_as_long_long(e.as<SelectNode>()->false_value);
      default: return true;  // variables, loads, casts, calls, and binaries (one operand is typed)
    }
  }

  // e printed so that its C type is exactly its IR type: keeps i64 arithmetic of literals from overflowing
  // in int and picks the right overload of min/max and the floor helpers.
  std::string typed(const Expr& e) {
    if (e.dtype() != DType::kInt64 || prints_as_long_long(e)) return expr(e);
    if (auto* imm = e.as<IntImmNode>()) {
      std::string text = std::to_string(imm->value) + "LL";
      return imm->value < 0 ? "(" + text + ")" : text;
    }
    return "((long long)" + expr(e) + ")";
  }

  // Loop variables are never negative; sums, products and floor quotients of non-negative values aren't either.
  bool non_negative(const Expr& e) const {
    switch (e.kind()) {
      case ExprKind::kIntImm: return e.as<IntImmNode>()->value >= 0;
      case ExprKind::kVar: return loop_vars_.count(e.as<VarNode>()->name) > 0;
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        if (!is_int(n->dtype)) return false;
        switch (n->op) {
          case BinaryOp::kAdd:
          case BinaryOp::kMul:
          case BinaryOp::kMin:
          case BinaryOp::kMax: return non_negative(n->a) && non_negative(n->b);
          case BinaryOp::kDiv:
          case BinaryOp::kMod: return non_negative(n->a) && positive_constant(n->b);
          case BinaryOp::kSub: return false;
        }
        return false;
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        return is_int(n->dtype) && is_int(n->value.dtype()) && dtype_bytes(n->dtype) >= dtype_bytes(n->value.dtype()) &&
               non_negative(n->value);
      }
      default: return false;
    }
  }
  static bool positive_constant(const Expr& e) {
    const int64_t* v = as_const_int(e);
    return v && *v > 0;
  }

  std::string expr(const Expr& e) {
    if (!e) throw std::invalid_argument(fail_prefix(f_) + "null expression");
    c_type(e.dtype());  // rejects f16/bf16 wherever they appear
    switch (e.kind()) {
      case ExprKind::kIntImm: return int_literal(e.as<IntImmNode>()->value, e.dtype());
      case ExprKind::kFloatImm: return float_literal(e.as<FloatImmNode>()->value);
      case ExprKind::kVar: {
        const std::string& name = e.as<VarNode>()->name;
        if (!loop_vars_.count(name))
          throw std::invalid_argument(fail_prefix(f_) + "variable '" + name + "' is not bound by an enclosing loop");
        return names_.var(name);
      }
      case ExprKind::kBinary: return binary_expr(*e.as<BinaryNode>());
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        return "(" + expr(n->a) + " " + compare_op_name(n->op) + " " + expr(n->b) + ")";
      }
      case ExprKind::kLogical: {
        auto* n = e.as<LogicalNode>();
        return "(" + expr(n->a) + (n->op == LogicalOp::kAnd ? " && " : " || ") + expr(n->b) + ")";
      }
      case ExprKind::kNot: return "(!" + expr(e.as<NotNode>()->a) + ")";
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        return "(" + expr(n->cond) + " ? " + expr(n->true_value) + " : " + expr(n->false_value) + ")";
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        return std::string("((") + c_type(n->dtype) + ")" + expr(n->value) + ")";
      }
      case ExprKind::kCall: return call_expr(*e.as<CallNode>());
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        return buffer_name(n->buffer) + "[" + expr(n->index) + "]";
      }
      case ExprKind::kTensorRead:
      case ExprKind::kReduce:
        throw std::invalid_argument(fail_prefix(f_) +
                                    "tensor reads and reductions must be lowered first: " + to_string(e));
    }
    throw std::invalid_argument(fail_prefix(f_) + "unknown expression kind");
  }

  std::string binary_expr(const BinaryNode& n) {
    bool integer = is_int(n.dtype);
    switch (n.op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
      case BinaryOp::kMul: {
        // One long long operand makes the whole operation long long; 255 - t needs no suffix on 255.
        bool b_sets_type = n.dtype == DType::kInt64 && prints_as_long_long(n.b);
        return "(" + (b_sets_type ? expr(n.a) : typed(n.a)) + " " + binary_op_name(n.op) + " " + expr(n.b) + ")";
      }
      case BinaryOp::kDiv:
      case BinaryOp::kMod: {
        if (!integer) return "(" + expr(n.a) + " / " + expr(n.b) + ")";
        // Floor and truncation agree when the dividend is non-negative and the divisor positive.
        if (non_negative(n.a) && positive_constant(n.b))
          return "(" + typed(n.a) + (n.op == BinaryOp::kDiv ? " / " : " % ") + expr(n.b) + ")";
        uses_floor_div_mod_ = true;
        return std::string(n.op == BinaryOp::kDiv ? "ingot_floordiv(" : "ingot_floormod(") + typed(n.a) + ", " +
               typed(n.b) + ")";
      }
      case BinaryOp::kMin:
      case BinaryOp::kMax: {
        const char* fn =
            integer ? (n.op == BinaryOp::kMin ? "min" : "max") : (n.op == BinaryOp::kMin ? "fminf" : "fmaxf");
        return std::string(fn) + "(" + typed(n.a) + ", " + typed(n.b) + ")";
      }
    }
    throw std::invalid_argument(fail_prefix(f_) + "unknown binary operator");
  }

  std::string call_expr(const CallNode& n) {
    const std::string x = expr(n.args[0]);
    if (n.func == MathFunc::kAbs && is_int(n.dtype)) return (n.dtype == DType::kInt64 ? "llabs(" : "abs(") + x + ")";
    if (n.dtype != DType::kFloat32)
      throw std::invalid_argument(fail_prefix(f_) + math_func_name(n.func) + " of " + dtype_name(n.dtype));
    switch (n.func) {
      case MathFunc::kExp: return "expf(" + x + ")";
      case MathFunc::kLog: return "logf(" + x + ")";
      case MathFunc::kTanh: return "tanhf(" + x + ")";
      case MathFunc::kSigmoid: return "(1.0f / (1.0f + expf(-" + x + ")))";
      case MathFunc::kSqrt: return "sqrtf(" + x + ")";
      case MathFunc::kRsqrt: return "rsqrtf(" + x + ")";
      case MathFunc::kErf: return "erff(" + x + ")";
      case MathFunc::kPow: return "powf(" + x + ", " + expr(n.args[1]) + ")";
      case MathFunc::kAbs: return "fabsf(" + x + ")";
    }
    throw std::invalid_argument(fail_prefix(f_) + "unknown math function");
  }

  std::string buffer_name(const Buffer& b) {
    if (!known_buffers_.count(b->name))
      throw std::invalid_argument(fail_prefix(f_) + "buffer '" + b->name +
                                  "' is used outside any Allocate and is not an argument or workspace");
    return names_.buffer(b->name);
  }

  // ---- statements ----

  void line(int indent, const std::string& text) { body_ << std::string(2 * indent, ' ') << text << "\n"; }

  // The guard conditions a statement needs at this placement, or "" when it needs none or cannot take one.
  // A guard may cover a statement only if it holds no barrier (every thread must reach those) and no loop
  // that the guard would cut short (a block loop under block 0, a thread loop under thread 0).
  std::pair<bool, bool> guard_for(const Stmt& s, Placement at) const {
    // Barriers and prefetches are for every thread of the grid.
    bool any_barrier = has_barrier(s) || contains(s, [](const Stmt& x) { return x->kind == StmtKind::kPrefetch; });
    bool block = !at.block_bound && !any_barrier && !has_loop_of(s, is_gpu_block);
    bool thread = !at.thread_bound && !any_barrier && !has_loop_of(s, is_gpu_thread);
    return {block, thread};
  }

  void emit_stmt(const Stmt& s, Placement at, int indent) {
    if (!s) return;
    if (auto* q = as<SeqNode>(s)) return emit_seq(q->stmts, at, indent);
    auto [block, thread] = guard_for(s, at);
    if (block || thread) return emit_guarded({s}, block, thread, at, indent);
    emit_unguarded(s, at, indent);
  }

  // Consecutive statements wanting the same guard share one `if`.
  void emit_seq(const std::vector<Stmt>& stmts, Placement at, int indent) {
    for (size_t i = 0; i < stmts.size();) {
      auto guard = guard_for(stmts[i], at);
      if (!guard.first && !guard.second) {
        emit_stmt(stmts[i++], at, indent);
        continue;
      }
      std::vector<Stmt> group;
      while (i < stmts.size() && guard_for(stmts[i], at) == guard) group.push_back(stmts[i++]);
      emit_guarded(group, guard.first, guard.second, at, indent);
    }
  }

  void emit_guarded(const std::vector<Stmt>& stmts, bool block, bool thread, Placement at, int indent) {
    std::string cond;
    if (block) {
      uses_block0_ = true;
      cond = "ingot_block0()";
      at.block_bound = true;
    }
    if (thread) {
      uses_thread0_ = true;
      cond += std::string(cond.empty() ? "" : " && ") + "ingot_thread0()";
      at.thread_bound = true;
    }
    line(indent, "if (" + cond + ") {");
    for (const Stmt& s : stmts) emit_stmt(s, at, indent + 1);
    line(indent, "}");
  }

  void emit_unguarded(const Stmt& s, Placement at, int indent) {
    switch (s->kind) {
      case StmtKind::kFor: return emit_for(*as<ForNode>(s), at, indent);
      case StmtKind::kSeq: return emit_seq(as<SeqNode>(s)->stmts, at, indent);
      case StmtKind::kStore: {
        auto* n = as<StoreNode>(s);
        if (inputs_.count(n->buffer->name))
          throw std::invalid_argument(fail_prefix(f_) + "store into input buffer '" + n->buffer->name + "'");
        line(indent, buffer_name(n->buffer) + "[" + expr(n->index) + "] = " + expr(n->value) + ";");
        return;
      }
      case StmtKind::kAllocate: return emit_allocate(*as<AllocateNode>(s), at, indent);
      case StmtKind::kIfThenElse: {
        auto* n = as<IfThenElseNode>(s);
        line(indent, "if (" + expr(n->cond) + ") {");
        emit_stmt(n->then_case, at, indent + 1);
        if (n->else_case) {
          line(indent, "} else {");
          emit_stmt(n->else_case, at, indent + 1);
        }
        line(indent, "}");
        return;
      }
      case StmtKind::kBarrier:
        if (as<BarrierNode>(s)->barrier_kind == BarrierKind::kBlock) {
          if (thread_loop_depth_ > 0)
            throw std::invalid_argument(fail_prefix(f_) + "block barrier inside a thread loop");
          line(indent, "__syncthreads();");
        } else if (as<BarrierNode>(s)->barrier_kind == BarrierKind::kKernel) {
          throw std::invalid_argument(fail_prefix(f_) +
                                      "a kernel barrier: split the function into one kernel each (split_kernels) "
                                      "before printing CUDA");
        } else {
          if (thread_loop_depth_ > 0 || block_loop_depth_ > 0)
            throw std::invalid_argument(fail_prefix(f_) + "grid barrier inside a block or thread loop");
          uses_grid_sync_ = true;
          line(indent, "ingot_grid_sync();");
        }
        return;
      case StmtKind::kPrefetch: return emit_prefetch(*as<PrefetchNode>(s), indent);
    }
  }

  // The whole grid walks the buffer's 128-byte lines, one thread per line: the L2 is one cache for all SMs, so
  // it does not matter which thread fetches what. Threads done with the current stage fetch while the others
  // finish it.
  void emit_prefetch(const PrefetchNode& n, int indent) {
    if (thread_loop_depth_ > 0 || block_loop_depth_ > 0)
      throw std::invalid_argument(fail_prefix(f_) + "prefetch of '" + n.buffer->name +
                                  "' inside a block or thread loop");
    int64_t bytes = n.buffer->num_elements() * dtype_bytes(n.buffer->dtype);
    line(indent,
         "for (long long ingot_line = ((long long)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + "
         "blockIdx.x) * (blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * blockDim.y + threadIdx.y) * "
         "blockDim.x + threadIdx.x;");
    line(indent + 2, "ingot_line < " + std::to_string((bytes + 127) / 128) + "LL;");
    line(indent + 2,
         "ingot_line += (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z)");
    line(indent + 1, "asm volatile(\"prefetch.global.L2 [%0];\" : : \"l\"(reinterpret_cast<const char*>(" +
                         buffer_name(n.buffer) + ") + ingot_line * 128));");
  }

  void emit_for(const ForNode& n, Placement at, int indent) {
    const std::string v = names_.var(n.name());
    const std::string type = c_type(n.var.dtype());
    const std::string extent = int_literal(n.extent, n.var.dtype());
    const int dim = dim_of(n.loop_kind);
    const bool entry_thread_bound = at.thread_bound;
    std::array<bool, 3>* bound = nullptr;
    if (is_gpu_block(n.loop_kind) || is_gpu_thread(n.loop_kind)) {
      bound = is_gpu_block(n.loop_kind) ? &block_dims_in_use_ : &thread_dims_in_use_;
      if ((*bound)[dim])
        throw std::invalid_argument(fail_prefix(f_) + "loop '" + n.name() + "' is nested inside another " +
                                    loop_kind_name(n.loop_kind) + " loop");
      (*bound)[dim] = true;
    }
    if (is_gpu_block(n.loop_kind)) {
      line(indent, "for (" + type + " " + v + " = blockIdx." + dim_letter(dim) + "; " + v + " < " + extent + "; " + v +
                       " += gridDim." + dim_letter(dim) + ") {");
      at.block_bound = true;
      ++block_loop_depth_;
    } else if (is_gpu_thread(n.loop_kind)) {
      line(indent, "for (" + type + " " + v + " = threadIdx." + dim_letter(dim) + "; " + v + " < " + extent + "; " + v +
                       " += blockDim." + dim_letter(dim) + ") {");
      at.thread_bound = true;
      ++thread_loop_depth_;
    } else {
      // Parallel loops are CPU work sharing; on the GPU they run serially where they stand (block 0, thread 0).
      if (n.loop_kind == LoopKind::kVectorized || n.loop_kind == LoopKind::kUnrolled) line(indent, "#pragma unroll");
      line(indent, "for (" + type + " " + v + " = 0; " + v + " < " + extent + "; ++" + v + ") {");
    }
    const bool trailing_sync = needs_trailing_sync(n, entry_thread_bound);
    loop_vars_.insert(n.name());
    emit_stmt(n.body, at, indent + 1);
    if (trailing_sync) line(indent + 1, "__syncthreads();");
    loop_vars_.erase(loop_vars_.find(n.name()));
    if (is_gpu_block(n.loop_kind)) --block_loop_depth_;
    if (is_gpu_thread(n.loop_kind)) --thread_loop_depth_;
    if (bound) (*bound)[dim] = false;
    line(indent, "}");
  }

  void emit_allocate(const AllocateNode& n, Placement at, int indent) {
    const Buffer& b = n.buffer;
    if (b->scope == MemoryScope::kGlobal)
      throw std::invalid_argument(fail_prefix(f_) + "global buffer '" + b->name +
                                  "' is allocated inside the kernel; pass it as workspace");
    bool newly_known = known_buffers_.insert(b->name).second;
    const std::string decl =
        std::string(c_type(b->dtype)) + " " + names_.buffer(b->name) + "[" + std::to_string(b->num_elements()) + "];";
    line(indent, b->scope == MemoryScope::kShared ? "__shared__ __align__(16) " + decl : decl);
    emit_stmt(n.body, at, indent);
    if (newly_known) known_buffers_.erase(b->name);
  }

  const LoopFunction& f_;
  NameTable names_;
  bool canonical_;
  std::string kernel_name_;  // stage functions are named after it, so that kernels can share a source file
  std::ostringstream body_;
  std::set<std::string> inputs_;
  std::set<std::string> known_buffers_;
  std::multiset<std::string> loop_vars_;
  std::array<bool, 3> block_dims_in_use_{false, false, false};
  std::array<bool, 3> thread_dims_in_use_{false, false, false};
  int block_loop_depth_ = 0;
  int thread_loop_depth_ = 0;
  bool uses_grid_sync_ = false;
  bool uses_block0_ = false;
  bool uses_thread0_ = false;
  bool uses_floor_div_mod_ = false;
  std::map<std::string, std::string> stage_function_names_;  // canonical text -> function name
  std::vector<std::string> stage_functions_;                 // printed __device__ functions, in order
};

}  // namespace

std::string cuda_kernel_name(const LoopFunction& f) { return f.name.empty() ? "ingot_kernel" : sanitize(f.name); }

std::string print_cuda(const LoopFunction& f) {
  if (!f.body) throw std::invalid_argument(fail_prefix(f) + "no body");
  return CudaPrinter(f, false, "").print();
}

std::string print_cuda_canonical(const LoopFunction& f, const std::string& kernel_name) {
  if (!f.body) throw std::invalid_argument(fail_prefix(f) + "no body");
  return CudaPrinter(f, true, kernel_name).print();
}

CudaLaunchConfig cuda_launch_config(const LoopFunction& f) {
  CudaLaunchConfig c;
  c.kernel_name = cuda_kernel_name(f);
  for_each_stmt(f.body, [&](const Stmt& s) {
    if (auto* loop = as<ForNode>(s)) {
      int d = dim_of(loop->loop_kind);
      if (is_gpu_block(loop->loop_kind)) c.grid[d] = std::max(c.grid[d], loop->extent);
      if (is_gpu_thread(loop->loop_kind)) c.block[d] = std::max(c.block[d], loop->extent);
    } else if (auto* b = as<BarrierNode>(s)) {
      c.cooperative = c.cooperative || b->barrier_kind == BarrierKind::kGrid;
    }
  });
  for (int d = 0; d < 3; ++d) {
    c.block[d] = std::min(c.block[d], kMaxBlockDim[d]);
    c.grid[d] = std::min(c.grid[d], kMaxGridDim[d]);
  }
  // Halving the largest dimension keeps the block's shape close to what the loops asked for.
  while (c.threads_per_block() > kMaxThreadsPerBlock) {
    auto largest = std::max_element(c.block.begin(), c.block.end());
    *largest = (*largest + 1) / 2;
  }
  return c;
}

CudaLaunchConfig fit_grid(CudaLaunchConfig config, int64_t max_blocks) {
  if (max_blocks < 1) throw std::invalid_argument("fit_grid: max_blocks must be positive");
  for (int d = 2; d >= 0 && config.num_blocks() > max_blocks; --d) {
    int64_t others = config.num_blocks() / config.grid[d];
    config.grid[d] = std::max<int64_t>(1, max_blocks / others);
  }
  return config;
}

}  // namespace ingot
