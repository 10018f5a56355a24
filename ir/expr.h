// Expressions: the scalar language of tensor expressions (TEs) and of the loop IR. Nodes are immutable and
// shared; build them with the free functions below, which check types. Structural equality and the printer
// are here; rewriting passes use ir/functor.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace ingot {

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kVar,
  kBinary,
  kCompare,
  kLogical,
  kNot,
  kSelect,
  kCast,
  kCall,
  kTensorRead,
  kBufferLoad,
  kReduce
};

// kDiv and kMod on integers round toward negative infinity (floor division), which keeps index algebra exact
// for negative values; on floats kDiv is ordinary division and kMod is not allowed.
enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kMod, kMin, kMax };
enum class CompareOp : uint8_t { kLT, kLE, kGT, kGE, kEQ, kNE };
enum class LogicalOp : uint8_t { kAnd, kOr };
enum class MathFunc : uint8_t { kExp, kLog, kTanh, kSigmoid, kSqrt, kRsqrt, kErf, kPow, kAbs };
enum class ReduceOp : uint8_t { kSum, kMax, kMin };
enum class MemoryScope : uint8_t { kGlobal, kShared, kLocal };

const char* binary_op_name(BinaryOp op);  // "+", "-", "*", "/", "%", "min", "max"
const char* compare_op_name(CompareOp op);
const char* math_func_name(MathFunc f);
const char* reduce_op_name(ReduceOp op);  // "sum", "max", "min"
const char* memory_scope_name(MemoryScope s);
MemoryScope parse_memory_scope(const std::string& name);  // throws std::invalid_argument

class ExprNode {
 public:
  const ExprKind kind;
  const DType dtype;
  virtual ~ExprNode() = default;

 protected:
  ExprNode(ExprKind k, DType t) : kind(k), dtype(t) {}
};

// A shared, immutable expression. Implicit from integer and floating literals so that `i * 4 + 1` reads
// naturally; integer literals become i64 and floating literals f32.
class Expr {
 public:
  Expr() = default;
  Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}  // NOLINT
  Expr(int value);                                                        // NOLINT
  Expr(int64_t value);                                                    // NOLINT
  Expr(double value);                                                     // NOLINT

  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }
  ExprKind kind() const { return node_->kind; }
  DType dtype() const { return node_->dtype; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }
  template <class T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct TensorNode;
// A handle to a tensor of the TE language (placeholder or compute); see ir/tensor.h.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> node) : node_(std::move(node)) {}
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }
  bool same_as(const Tensor& other) const { return node_ == other.node_; }
  // Reads this tensor at the given indices (one per dimension).
  Expr operator()(std::vector<Expr> indices) const;
  template <class... I>
  Expr operator()(I... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }

 private:
  std::shared_ptr<const TensorNode> node_;
};

// A region of memory in the loop IR: global buffers are function arguments or workspace; shared and local
// buffers are allocated by an Allocate statement.
struct BufferNode {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  MemoryScope scope;
  int64_t num_elements() const;
};
using Buffer = std::shared_ptr<const BufferNode>;
Buffer make_buffer(std::string name, DType dtype, std::vector<int64_t> shape, MemoryScope scope);

struct IntImmNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImmNode(int64_t v, DType t) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
};
struct FloatImmNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImmNode(double v, DType t) : ExprNode(kKind, t), value(v) {}
  const double value;
};
// Variables are identified by name: a loop variable, a compute axis or a reduce axis.
struct VarNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string n, DType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};
struct BinaryNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryNode(BinaryOp o, Expr x, Expr y) : ExprNode(kKind, x.dtype()), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
};
struct CompareNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCompare;
  CompareNode(CompareOp o, Expr x, Expr y) : ExprNode(kKind, DType::kBool), op(o), a(std::move(x)), b(std::move(y)) {}
  const CompareOp op;
  const Expr a, b;
};
struct LogicalNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLogical;
  LogicalNode(LogicalOp o, Expr x, Expr y) : ExprNode(kKind, DType::kBool), op(o), a(std::move(x)), b(std::move(y)) {}
  const LogicalOp op;
  const Expr a, b;
};
struct NotNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  explicit NotNode(Expr x) : ExprNode(kKind, DType::kBool), a(std::move(x)) {}
  const Expr a;
};
struct SelectNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};
struct CastNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastNode(DType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
};
struct CallNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(MathFunc f, std::vector<Expr> a, DType t) : ExprNode(kKind, t), func(f), args(std::move(a)) {}
  const MathFunc func;
  const std::vector<Expr> args;
};
struct TensorReadNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kTensorRead;
  TensorReadNode(Tensor t, std::vector<Expr> idx, DType dt)
      : ExprNode(kKind, dt), tensor(std::move(t)), indices(std::move(idx)) {}
  const Tensor tensor;
  const std::vector<Expr> indices;
};
// Loop IR only: reads one element of a buffer at a flat (row-major) index.
struct BufferLoadNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  BufferLoadNode(Buffer b, Expr i) : ExprNode(kKind, b->dtype), buffer(std::move(b)), index(std::move(i)) {}
  const Buffer buffer;
  const Expr index;
};

// An iteration axis over [0, extent): a compute's spatial axis or a reduction axis.
struct IterVar {
  Expr var;  // a VarNode
  int64_t extent = 0;
  const std::string& name() const;
};
IterVar reduce_axis(int64_t extent, std::string name);

// A reduction; appears only as the whole body of a compute.
struct ReduceNode final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kReduce;
  ReduceNode(ReduceOp o, Expr s, std::vector<IterVar> ax)
      : ExprNode(kKind, s.dtype()), op(o), source(std::move(s)), axes(std::move(ax)) {}
  const ReduceOp op;
  const Expr source;
  const std::vector<IterVar> axes;
};

// Builders. They check operand types and throw std::invalid_argument with the operation named; an
// immediate operand takes the type of the other operand.
Expr int_imm(int64_t value, DType dtype = DType::kInt64);
Expr float_imm(double value, DType dtype = DType::kFloat32);
Expr var(std::string name, DType dtype = DType::kInt64);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr compare(CompareOp op, Expr a, Expr b);
Expr logical(LogicalOp op, Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr cond, Expr true_value, Expr false_value);
// at(k) for the k in [0, n) that equals index, as a balanced tree of selects: a stacked sequence reads any of its n
// parts after log2(n) comparisons. n must be positive.
Expr choose(const Expr& index, int64_t n, const std::function<Expr(int64_t)>& at);
Expr cast(DType dtype, Expr value);
Expr call(MathFunc func, std::vector<Expr> args);
Expr read(Tensor tensor, std::vector<Expr> indices);
Expr load(Buffer buffer, Expr index);
// The row-major flat offset of `index` into a buffer of `shape` (0 for a scalar), as loads and stores take it.
Expr flat_index(const std::vector<Expr>& index, const std::vector<int64_t>& shape);
Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes);
Expr identity_element(ReduceOp op, DType dtype);  // 0, -inf or +inf

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr minimum(Expr a, Expr b);
Expr maximum(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr sum(Expr source, std::vector<IterVar> axes);
Expr max_reduce(Expr source, std::vector<IterVar> axes);
Expr min_reduce(Expr source, std::vector<IterVar> axes);

namespace math {
Expr exp(Expr x);
Expr log(Expr x);
Expr tanh(Expr x);
Expr sigmoid(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr erf(Expr x);
Expr pow(Expr x, Expr y);
Expr abs(Expr x);
}  // namespace math

// Integer value of an IntImm, or nullptr.
const int64_t* as_const_int(const Expr& e);
bool is_const_int(const Expr& e, int64_t value);

// Structural equality: same tree; variables compare by name, tensors by name and shape, buffers by name.
bool structural_equal(const Expr& a, const Expr& b);
// A stable 64-bit hash consistent with structural_equal (fnv1a64 of the printed form, ir/hash.h).
uint64_t structural_hash(const Expr& e);

std::string to_string(const Expr& e);
std::ostream& operator<<(std::ostream& os, const Expr& e);
// Shortest text that reads back as the same double (used by printers).
std::string format_double(double v);

}  // namespace ingot
