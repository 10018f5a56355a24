#include "ir/expr.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "ir/hash.h"
#include "ir/tensor.h"

namespace ingot {

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kMin: return "min";
    case BinaryOp::kMax: return "max";
  }
  return "?";
}

const char* compare_op_name(CompareOp op) {
  switch (op) {
    case CompareOp::kLT: return "<";
    case CompareOp::kLE: return "<=";
    case CompareOp::kGT: return ">";
    case CompareOp::kGE: return ">=";
    case CompareOp::kEQ: return "==";
    case CompareOp::kNE: return "!=";
  }
  return "?";
}

const char* math_func_name(MathFunc f) {
  switch (f) {
    case MathFunc::kExp: return "exp";
    case MathFunc::kLog: return "log";
    case MathFunc::kTanh: return "tanh";
    case MathFunc::kSigmoid: return "sigmoid";
    case MathFunc::kSqrt: return "sqrt";
    case MathFunc::kRsqrt: return "rsqrt";
    case MathFunc::kErf: return "erf";
    case MathFunc::kPow: return "pow";
    case MathFunc::kAbs: return "abs";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

const char* memory_scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::kGlobal: return "global";
    case MemoryScope::kShared: return "shared";
    case MemoryScope::kLocal: return "local";
  }
  return "?";
}

MemoryScope parse_memory_scope(const std::string& name) {
  for (MemoryScope s : {MemoryScope::kGlobal, MemoryScope::kShared, MemoryScope::kLocal})
    if (name == memory_scope_name(s)) return s;
  throw std::invalid_argument("unknown memory scope '" + name + "' (expected global, shared or local)");
}

Expr::Expr(int value) : Expr(int_imm(value)) {}
Expr::Expr(int64_t value) : Expr(int_imm(value)) {}
Expr::Expr(double value) : Expr(float_imm(value)) {}

Expr Tensor::operator()(std::vector<Expr> indices) const { return read(*this, std::move(indices)); }

int64_t BufferNode::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape, MemoryScope scope) {
  for (int64_t d : shape)
    if (d <= 0) throw std::invalid_argument("buffer '" + name + "' has a non-positive dimension");
  return std::make_shared<const BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), scope});
}

const std::string& IterVar::name() const { return var.as<VarNode>()->name; }

IterVar reduce_axis(int64_t extent, std::string name) {
  if (extent <= 0) throw std::invalid_argument("reduce axis '" + name + "' needs a positive extent");
  return IterVar{var(std::move(name)), extent};
}

namespace {

[[noreturn]] void type_error(const char* what, const Expr& a, const Expr& b) {
  throw std::invalid_argument(std::string("type mismatch in ") + what + ": " + dtype_name(a.dtype()) + " vs " +
                              dtype_name(b.dtype()) + " (" + to_string(a) + ", " + to_string(b) + ")");
}

// Gives an immediate operand the other operand's type, then requires equal types.
void unify(const char* what, Expr& a, Expr& b) {
  if (a.dtype() == b.dtype()) return;
  auto retype = [](const Expr& imm, DType to) -> Expr {
    if (auto* i = imm.as<IntImmNode>()) return is_float(to) ? float_imm(double(i->value), to) : int_imm(i->value, to);
    if (auto* f = imm.as<FloatImmNode>())
      if (is_float(to)) return float_imm(f->value, to);
    return Expr();
  };
  bool a_imm = a.as<IntImmNode>() || a.as<FloatImmNode>();
  bool b_imm = b.as<IntImmNode>() || b.as<FloatImmNode>();
  if (b_imm && !a_imm) {
    if (Expr r = retype(b, a.dtype())) {
      b = r;
      return;
    }
  } else if (a_imm && !b_imm) {
    if (Expr r = retype(a, b.dtype())) {
      a = r;
      return;
    }
  } else if (a_imm && b_imm && is_int(a.dtype()) && is_int(b.dtype())) {
    a = int_imm(a.as<IntImmNode>()->value, DType::kInt64);
    b = int_imm(b.as<IntImmNode>()->value, DType::kInt64);
    return;
  } else if (a_imm && b_imm) {
    DType t = is_float(a.dtype()) ? a.dtype() : b.dtype();
    a = retype(a, t);
    b = retype(b, t);
    return;
  }
  type_error(what, a, b);
}

// Builds the message only when the check fails: builders run for every node that lowering creates.
#define INGOT_REQUIRE(ok, message)                   \
  do {                                               \
    if (!(ok)) throw std::invalid_argument(message); \
  } while (0)

}  // namespace

Expr int_imm(int64_t value, DType dtype) {
  INGOT_REQUIRE(is_int(dtype) || dtype == DType::kBool, std::string("int_imm of type ") + dtype_name(dtype));
  return Expr(std::make_shared<const IntImmNode>(value, dtype));
}

Expr float_imm(double value, DType dtype) {
  INGOT_REQUIRE(is_float(dtype), std::string("float_imm of type ") + dtype_name(dtype));
  return Expr(std::make_shared<const FloatImmNode>(value, dtype));
}

Expr var(std::string name, DType dtype) {
  INGOT_REQUIRE(!name.empty(), "a variable needs a name");
  return Expr(std::make_shared<const VarNode>(std::move(name), dtype));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  INGOT_REQUIRE(a && b, std::string("null operand of ") + binary_op_name(op));
  unify(binary_op_name(op), a, b);
  INGOT_REQUIRE(a.dtype() != DType::kBool, std::string("operator ") + binary_op_name(op) + " on bool");
  INGOT_REQUIRE(!(op == BinaryOp::kMod && is_float(a.dtype())), "operator % on floating-point values");
  return Expr(std::make_shared<const BinaryNode>(op, std::move(a), std::move(b)));
}

Expr compare(CompareOp op, Expr a, Expr b) {
  INGOT_REQUIRE(a && b, std::string("null operand of ") + compare_op_name(op));
  unify(compare_op_name(op), a, b);
  return Expr(std::make_shared<const CompareNode>(op, std::move(a), std::move(b)));
}

Expr logical(LogicalOp op, Expr a, Expr b) {
  INGOT_REQUIRE(a && b && a.dtype() == DType::kBool && b.dtype() == DType::kBool,
                std::string("logical ") + (op == LogicalOp::kAnd ? "and" : "or") + " needs bool operands");
  return Expr(std::make_shared<const LogicalNode>(op, std::move(a), std::move(b)));
}

Expr logical_not(Expr a) {
  INGOT_REQUIRE(a && a.dtype() == DType::kBool, "logical not needs a bool operand");
  return Expr(std::make_shared<const NotNode>(std::move(a)));
}

Expr select(Expr cond, Expr true_value, Expr false_value) {
  INGOT_REQUIRE(cond && true_value && false_value, "select needs three operands");
  INGOT_REQUIRE(cond.dtype() == DType::kBool,
                std::string("select condition must be bool, not ") + dtype_name(cond.dtype()));
  unify("select", true_value, false_value);
  return Expr(std::make_shared<const SelectNode>(std::move(cond), std::move(true_value), std::move(false_value)));
}

namespace {
Expr choose_in(const Expr& index, int64_t lo, int64_t hi, const std::function<Expr(int64_t)>& at) {
  if (hi - lo == 1) return at(lo);
  const int64_t mid = lo + (hi - lo) / 2;
  return select(lt(index, Expr(mid)), choose_in(index, lo, mid, at), choose_in(index, mid, hi, at));
}
}  // namespace

Expr choose(const Expr& index, int64_t n, const std::function<Expr(int64_t)>& at) {
  INGOT_REQUIRE(n > 0, "choose needs at least one part");
  return choose_in(index, 0, n, at);
}

Expr cast(DType dtype, Expr value) {
  INGOT_REQUIRE(bool(value), "cast of a null expression");
  if (value.dtype() == dtype) return value;
  return Expr(std::make_shared<const CastNode>(dtype, std::move(value)));
}

Expr call(MathFunc func, std::vector<Expr> args) {
  size_t want = func == MathFunc::kPow ? 2 : 1;
  INGOT_REQUIRE(args.size() == want,
                std::string(math_func_name(func)) + " takes " + std::to_string(want) + " argument(s)");
  if (want == 2) unify(math_func_name(func), args[0], args[1]);
  INGOT_REQUIRE(
      is_float(args[0].dtype()) || func == MathFunc::kAbs,
      std::string(math_func_name(func)) + " needs a floating-point argument, not " + dtype_name(args[0].dtype()));
  DType t = args[0].dtype();
  return Expr(std::make_shared<const CallNode>(func, std::move(args), t));
}

Expr read(Tensor tensor, std::vector<Expr> indices) {
  INGOT_REQUIRE(bool(tensor), "read of a null tensor");
  INGOT_REQUIRE(indices.size() == tensor->shape.size(),
                "tensor '" + tensor->name + "' has rank " + std::to_string(tensor->shape.size()) +
                    " but is read with " + std::to_string(indices.size()) + " indices");
  for (Expr& i : indices) {
    INGOT_REQUIRE(bool(i), "null index reading '" + tensor->name + "'");
    if (i.dtype() == DType::kInt32) i = cast(DType::kInt64, i);
    INGOT_REQUIRE(i.dtype() == DType::kInt64, "index of '" + tensor->name + "' must be an integer, not " +
                                                  dtype_name(i.dtype()) + " (" + to_string(i) + ")");
  }
  DType t = tensor->dtype;
  return Expr(std::make_shared<const TensorReadNode>(std::move(tensor), std::move(indices), t));
}

Expr flat_index(const std::vector<Expr>& index, const std::vector<int64_t>& shape) {
  if (index.empty()) return Expr(int64_t(0));
  Expr flat = index[0];
  for (size_t d = 1; d < index.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

Expr load(Buffer buffer, Expr index) {
  INGOT_REQUIRE(buffer && index && is_int(index.dtype()), "load needs a buffer and an integer index");
  return Expr(std::make_shared<const BufferLoadNode>(std::move(buffer), std::move(index)));
}

Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes) {
  INGOT_REQUIRE(bool(source), "reduction of a null expression");
  INGOT_REQUIRE(!axes.empty(), "a reduction needs at least one reduce axis");
  INGOT_REQUIRE(!source.as<ReduceNode>(), "nested reductions are not allowed; use two computes");
  return Expr(std::make_shared<const ReduceNode>(op, std::move(source), std::move(axes)));
}

Expr identity_element(ReduceOp op, DType dtype) {
  double inf = std::numeric_limits<double>::infinity();
  double v = op == ReduceOp::kSum ? 0.0 : op == ReduceOp::kMax ? -inf : inf;
  if (is_float(dtype)) return float_imm(v, dtype);
  int64_t iv = op == ReduceOp::kSum   ? 0
               : op == ReduceOp::kMax ? std::numeric_limits<int64_t>::min()
                                      : std::numeric_limits<int64_t>::max();
  return int_imm(iv, dtype);
}

Expr operator+(Expr a, Expr b) { return binary(BinaryOp::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary(BinaryOp::kSub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return binary(BinaryOp::kMul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary(BinaryOp::kDiv, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return binary(BinaryOp::kMod, std::move(a), std::move(b)); }
Expr operator-(Expr a) {
  Expr zero = is_float(a.dtype()) ? float_imm(0.0, a.dtype()) : int_imm(0, a.dtype());
  return binary(BinaryOp::kSub, zero, std::move(a));
}
Expr minimum(Expr a, Expr b) { return binary(BinaryOp::kMin, std::move(a), std::move(b)); }
Expr maximum(Expr a, Expr b) { return binary(BinaryOp::kMax, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return compare(CompareOp::kLT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return compare(CompareOp::kLE, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return compare(CompareOp::kGT, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return compare(CompareOp::kGE, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return compare(CompareOp::kEQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return compare(CompareOp::kNE, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return logical(LogicalOp::kAnd, std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return logical(LogicalOp::kOr, std::move(a), std::move(b)); }
Expr sum(Expr source, std::vector<IterVar> axes) { return reduce(ReduceOp::kSum, std::move(source), std::move(axes)); }
Expr max_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ReduceOp::kMax, std::move(source), std::move(axes));
}
Expr min_reduce(Expr source, std::vector<IterVar> axes) {
  return reduce(ReduceOp::kMin, std::move(source), std::move(axes));
}

namespace math {
Expr exp(Expr x) { return call(MathFunc::kExp, {std::move(x)}); }
Expr log(Expr x) { return call(MathFunc::kLog, {std::move(x)}); }
Expr tanh(Expr x) { return call(MathFunc::kTanh, {std::move(x)}); }
Expr sigmoid(Expr x) { return call(MathFunc::kSigmoid, {std::move(x)}); }
Expr sqrt(Expr x) { return call(MathFunc::kSqrt, {std::move(x)}); }
Expr rsqrt(Expr x) { return call(MathFunc::kRsqrt, {std::move(x)}); }
Expr erf(Expr x) { return call(MathFunc::kErf, {std::move(x)}); }
Expr pow(Expr x, Expr y) { return call(MathFunc::kPow, {std::move(x), std::move(y)}); }
Expr abs(Expr x) { return call(MathFunc::kAbs, {std::move(x)}); }
}  // namespace math

const int64_t* as_const_int(const Expr& e) {
  auto* n = e.as<IntImmNode>();
  return n ? &n->value : nullptr;
}

bool is_const_int(const Expr& e, int64_t value) {
  const int64_t* v = as_const_int(e);
  return v && *v == value;
}

bool structural_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a || !b || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  auto all_equal = [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!structural_equal(x[i], y[i])) return false;
    return true;
  };
  switch (a.kind()) {
    case ExprKind::kIntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case ExprKind::kVar: return a.as<VarNode>()->name == b.as<VarNode>()->name;
    case ExprKind::kBinary: {
      auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      return x->op == y->op && structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
    case ExprKind::kCompare: {
      auto *x = a.as<CompareNode>(), *y = b.as<CompareNode>();
      return x->op == y->op && structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
    case ExprKind::kLogical: {
      auto *x = a.as<LogicalNode>(), *y = b.as<LogicalNode>();
      return x->op == y->op && structural_equal(x->a, y->a) && structural_equal(x->b, y->b);
    }
    case ExprKind::kNot: return structural_equal(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return structural_equal(x->cond, y->cond) && structural_equal(x->true_value, y->true_value) &&
             structural_equal(x->false_value, y->false_value);
    }
    case ExprKind::kCast: return structural_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->func == y->func && all_equal(x->args, y->args);
    }
    case ExprKind::kTensorRead: {
      auto *x = a.as<TensorReadNode>(), *y = b.as<TensorReadNode>();
      return x->tensor->name == y->tensor->name && x->tensor->shape == y->tensor->shape &&
             all_equal(x->indices, y->indices);
    }
    case ExprKind::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return x->buffer->name == y->buffer->name && structural_equal(x->index, y->index);
    }
    case ExprKind::kReduce: {
      auto *x = a.as<ReduceNode>(), *y = b.as<ReduceNode>();
      if (x->op != y->op || x->axes.size() != y->axes.size()) return false;
      for (size_t i = 0; i < x->axes.size(); ++i)
        if (x->axes[i].name() != y->axes[i].name() || x->axes[i].extent != y->axes[i].extent) return false;
      return structural_equal(x->source, y->source);
    }
  }
  return false;
}

uint64_t structural_hash(const Expr& e) { return fnv1a64(to_string(e)); }

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

void print(std::ostream& os, const Expr& e) {
  if (!e) {
    os << "<null>";
    return;
  }
  auto list = [&](const std::vector<Expr>& xs) {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) os << ", ";
      print(os, xs[i]);
    }
  };
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      auto* n = e.as<IntImmNode>();
      if (n->dtype == DType::kBool)
        os << (n->value ? "true" : "false");
      else
        os << n->value;
      if (n->dtype == DType::kInt32) os << "i32";
      return;
    }
    case ExprKind::kFloatImm: {
      auto* n = e.as<FloatImmNode>();
      os << format_double(n->value);
      if (n->dtype != DType::kFloat32) os << dtype_name(n->dtype);
      return;
    }
    case ExprKind::kVar: os << e.as<VarNode>()->name; return;
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      if (n->op == BinaryOp::kMin || n->op == BinaryOp::kMax) {
        os << binary_op_name(n->op) << "(";
        print(os, n->a);
        os << ", ";
        print(os, n->b);
        os << ")";
      } else {
        os << "(";
        print(os, n->a);
        os << " " << binary_op_name(n->op) << " ";
        print(os, n->b);
        os << ")";
      }
      return;
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      os << "(";
      print(os, n->a);
      os << " " << compare_op_name(n->op) << " ";
      print(os, n->b);
      os << ")";
      return;
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      os << "(";
      print(os, n->a);
      os << (n->op == LogicalOp::kAnd ? " && " : " || ");
      print(os, n->b);
      os << ")";
      return;
    }
    case ExprKind::kNot:
      os << "!";
      print(os, e.as<NotNode>()->a);
      return;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      os << "select(";
      list({n->cond, n->true_value, n->false_value});
      os << ")";
      return;
    }
    case ExprKind::kCast:
      os << dtype_name(e.dtype()) << "(";
      print(os, e.as<CastNode>()->value);
      os << ")";
      return;
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      os << math_func_name(n->func) << "(";
      list(n->args);
      os << ")";
      return;
    }
    case ExprKind::kTensorRead: {
      auto* n = e.as<TensorReadNode>();
      os << n->tensor->name << "[";
      list(n->indices);
      os << "]";
      return;
    }
    case ExprKind::kBufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      os << n->buffer->name << "[";
      print(os, n->index);
      os << "]";
      return;
    }
    case ExprKind::kReduce: {
      auto* n = e.as<ReduceNode>();
      os << reduce_op_name(n->op) << "(";
      print(os, n->source);
      os << ", axes=[";
      for (size_t i = 0; i < n->axes.size(); ++i)
        os << (i ? ", " : "") << n->axes[i].name() << ":" << n->axes[i].extent;
      os << "])";
      return;
    }
  }
}

}  // namespace

std::string to_string(const Expr& e) {
  std::ostringstream os;
  print(os, e);
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }

}  // namespace ingot
