#include "ir/stmt.h"

#include <sstream>
#include <stdexcept>

namespace ingot {

const char* loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::kSerial: return "serial";
    case LoopKind::kParallel: return "parallel";
    case LoopKind::kVectorized: return "vectorized";
    case LoopKind::kUnrolled: return "unrolled";
    case LoopKind::kBlockX: return "blockIdx.x";
    case LoopKind::kBlockY: return "blockIdx.y";
    case LoopKind::kBlockZ: return "blockIdx.z";
    case LoopKind::kThreadX: return "threadIdx.x";
    case LoopKind::kThreadY: return "threadIdx.y";
    case LoopKind::kThreadZ: return "threadIdx.z";
  }
  return "?";
}

const char* barrier_kind_name(BarrierKind k) {
  switch (k) {
    case BarrierKind::kBlock: return "block";
    case BarrierKind::kGrid: return "grid";
    case BarrierKind::kKernel: return "kernel";
  }
  return "?";
}

LoopKind parse_loop_kind(const std::string& name) {
  for (int i = 0; i <= int(LoopKind::kThreadZ); ++i)
    if (name == loop_kind_name(LoopKind(i))) return LoopKind(i);
  throw std::invalid_argument("unknown loop kind '" + name +
                              "' (expected serial, parallel, vectorized, unrolled, blockIdx.x/y/z or threadIdx.x/y/z)");
}

Stmt for_loop(Expr v, int64_t extent, LoopKind kind, Stmt body, int64_t explicit_lanes) {
  if (!v.as<VarNode>()) throw std::invalid_argument("for loop needs a variable");
  if (extent <= 0) throw std::invalid_argument("loop '" + v.as<VarNode>()->name + "' needs a positive extent");
  if (!body) throw std::invalid_argument("loop '" + v.as<VarNode>()->name + "' has no body");
  if (explicit_lanes < 0 || (explicit_lanes > 0 && kind != LoopKind::kVectorized))
    throw std::invalid_argument("loop '" + v.as<VarNode>()->name +
                                "': explicit vector lanes need a vectorized loop and a positive count");
  return std::make_shared<const ForNode>(std::move(v), extent, kind, std::move(body), explicit_lanes);
}

Stmt with_body(const ForNode* loop, Stmt body) {
  return for_loop(loop->var, loop->extent, loop->loop_kind, std::move(body), loop->explicit_lanes);
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s) continue;
    if (auto* q = as<SeqNode>(s))
      flat.insert(flat.end(), q->stmts.begin(), q->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<const SeqNode>(std::move(flat));
}

Stmt store(Buffer buffer, Expr index, Expr value) {
  if (!buffer || !index || !value) throw std::invalid_argument("store needs a buffer, an index and a value");
  if (!is_int(index.dtype())) throw std::invalid_argument("store to '" + buffer->name + "' with a non-integer index");
  if (value.dtype() != buffer->dtype)
    throw std::invalid_argument("store of " + std::string(dtype_name(value.dtype())) + " into " +
                                dtype_name(buffer->dtype) + " buffer '" + buffer->name + "'");
  return std::make_shared<const StoreNode>(std::move(buffer), std::move(index), std::move(value));
}

Stmt allocate(Buffer buffer, Stmt body) {
  if (!buffer || !body) throw std::invalid_argument("allocate needs a buffer and a body");
  return std::make_shared<const AllocateNode>(std::move(buffer), std::move(body));
}

Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case) {
  if (!cond || cond.dtype() != DType::kBool || !then_case)
    throw std::invalid_argument("if needs a bool condition and a body");
  return std::make_shared<const IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt barrier(BarrierKind kind) { return std::make_shared<const BarrierNode>(kind); }

Stmt prefetch(Buffer buffer) {
  if (!buffer) throw std::invalid_argument("prefetch needs a buffer");
  if (buffer->scope != MemoryScope::kGlobal)
    throw std::invalid_argument("prefetch of '" + buffer->name + "', which is not a global buffer");
  return std::make_shared<const PrefetchNode>(std::move(buffer));
}

Stmt map_exprs(const Stmt& s, const std::function<Expr(const Expr&)>& fn) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::kFor: {
      auto* n = as<ForNode>(s);
      Stmt b = map_exprs(n->body, fn);
      return b == n->body ? s : with_body(n, b);
    }
    case StmtKind::kSeq: {
      auto* n = as<SeqNode>(s);
      std::vector<Stmt> out;
      bool changed = false;
      for (const Stmt& c : n->stmts) {
        out.push_back(map_exprs(c, fn));
        changed |= out.back() != c;
      }
      return changed ? seq(std::move(out)) : s;
    }
    case StmtKind::kStore: {
      auto* n = as<StoreNode>(s);
      Expr i = fn(n->index), v = fn(n->value);
      return i.same_as(n->index) && v.same_as(n->value) ? s : store(n->buffer, i, v);
    }
    case StmtKind::kAllocate: {
      auto* n = as<AllocateNode>(s);
      Stmt b = map_exprs(n->body, fn);
      return b == n->body ? s : allocate(n->buffer, b);
    }
    case StmtKind::kIfThenElse: {
      auto* n = as<IfThenElseNode>(s);
      Expr c = fn(n->cond);
      Stmt t = map_exprs(n->then_case, fn), e = map_exprs(n->else_case, fn);
      return c.same_as(n->cond) && t == n->then_case && e == n->else_case ? s : if_then_else(c, t, e);
    }
    case StmtKind::kBarrier:
    case StmtKind::kPrefetch: return s;
  }
  return s;
}

void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& fn) {
  if (!s) return;
  fn(s);
  switch (s->kind) {
    case StmtKind::kFor: for_each_stmt(as<ForNode>(s)->body, fn); break;
    case StmtKind::kSeq:
      for (const Stmt& c : as<SeqNode>(s)->stmts) for_each_stmt(c, fn);
      break;
    case StmtKind::kAllocate: for_each_stmt(as<AllocateNode>(s)->body, fn); break;
    case StmtKind::kIfThenElse:
      for_each_stmt(as<IfThenElseNode>(s)->then_case, fn);
      for_each_stmt(as<IfThenElseNode>(s)->else_case, fn);
      break;
    case StmtKind::kStore:
    case StmtKind::kBarrier:
    case StmtKind::kPrefetch: break;
  }
}

bool structural_equal(const Stmt& a, const Stmt& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case StmtKind::kFor: {
      auto *x = as<ForNode>(a), *y = as<ForNode>(b);
      return x->name() == y->name() && x->extent == y->extent && x->loop_kind == y->loop_kind &&
             x->explicit_lanes == y->explicit_lanes && structural_equal(x->body, y->body);
    }
    case StmtKind::kSeq: {
      auto *x = as<SeqNode>(a), *y = as<SeqNode>(b);
      if (x->stmts.size() != y->stmts.size()) return false;
      for (size_t i = 0; i < x->stmts.size(); ++i)
        if (!structural_equal(x->stmts[i], y->stmts[i])) return false;
      return true;
    }
    case StmtKind::kStore: {
      auto *x = as<StoreNode>(a), *y = as<StoreNode>(b);
      return x->buffer->name == y->buffer->name && structural_equal(x->index, y->index) &&
             structural_equal(x->value, y->value);
    }
    case StmtKind::kAllocate: {
      auto *x = as<AllocateNode>(a), *y = as<AllocateNode>(b);
      return x->buffer->name == y->buffer->name && x->buffer->shape == y->buffer->shape &&
             x->buffer->scope == y->buffer->scope && structural_equal(x->body, y->body);
    }
    case StmtKind::kIfThenElse: {
      auto *x = as<IfThenElseNode>(a), *y = as<IfThenElseNode>(b);
      return structural_equal(x->cond, y->cond) && structural_equal(x->then_case, y->then_case) &&
             structural_equal(x->else_case, y->else_case);
    }
    case StmtKind::kBarrier: return as<BarrierNode>(a)->barrier_kind == as<BarrierNode>(b)->barrier_kind;
    case StmtKind::kPrefetch: return as<PrefetchNode>(a)->buffer->name == as<PrefetchNode>(b)->buffer->name;
  }
  return false;
}

namespace {

std::string shape_text(const Buffer& b) {
  std::ostringstream os;
  os << dtype_name(b->dtype) << "[";
  for (size_t d = 0; d < b->shape.size(); ++d) os << (d ? ", " : "") << b->shape[d];
  os << "]";
  return os.str();
}

void print(std::ostream& os, const Stmt& s, int indent) {
  std::string pad(indent * 2, ' ');
  if (!s) return;
  switch (s->kind) {
    case StmtKind::kFor: {
      auto* n = as<ForNode>(s);
      os << pad << "for " << n->name() << " in 0.." << n->extent;
      if (n->loop_kind != LoopKind::kSerial) os << " " << loop_kind_name(n->loop_kind);
      if (n->explicit_lanes > 0) os << " explicit(" << n->explicit_lanes << ")";
      os << " {\n";
      print(os, n->body, indent + 1);
      os << pad << "}\n";
      return;
    }
    case StmtKind::kSeq:
      for (const Stmt& c : as<SeqNode>(s)->stmts) print(os, c, indent);
      return;
    case StmtKind::kStore: {
      auto* n = as<StoreNode>(s);
      os << pad << n->buffer->name << "[" << to_string(n->index) << "] = " << to_string(n->value) << "\n";
      return;
    }
    case StmtKind::kAllocate: {
      auto* n = as<AllocateNode>(s);
      os << pad << "alloc " << n->buffer->name << ": " << shape_text(n->buffer) << " "
         << memory_scope_name(n->buffer->scope) << " {\n";
      print(os, n->body, indent + 1);
      os << pad << "}\n";
      return;
    }
    case StmtKind::kIfThenElse: {
      auto* n = as<IfThenElseNode>(s);
      os << pad << "if " << to_string(n->cond) << " {\n";
      print(os, n->then_case, indent + 1);
      if (n->else_case) {
        os << pad << "} else {\n";
        print(os, n->else_case, indent + 1);
      }
      os << pad << "}\n";
      return;
    }
    case StmtKind::kBarrier:
      os << pad << "barrier " << barrier_kind_name(as<BarrierNode>(s)->barrier_kind) << "\n";
      return;
    case StmtKind::kPrefetch: os << pad << "prefetch " << as<PrefetchNode>(s)->buffer->name << "\n"; return;
  }
}

}  // namespace

std::string to_string(const Stmt& s, int indent) {
  std::ostringstream os;
  print(os, s, indent);
  return os.str();
}

std::string to_string(const LoopFunction& f) {
  std::ostringstream os;
  os << "func " << f.name << "(";
  for (size_t i = 0; i < f.inputs.size(); ++i)
    os << (i ? ", " : "") << f.inputs[i]->name << ": " << shape_text(f.inputs[i]);
  os << ") -> (";
  for (size_t i = 0; i < f.outputs.size(); ++i)
    os << (i ? ", " : "") << f.outputs[i]->name << ": " << shape_text(f.outputs[i]);
  os << ") {\n";
  for (const PackedLayout& p : f.packed_inputs) os << "  packed " << p.to_string() << "\n";
  for (const Buffer& w : f.workspace) os << "  workspace " << w->name << ": " << shape_text(w) << "\n";
  print(os, f.body, 1);
  os << "}\n";
  return os.str();
}

}  // namespace ingot
