#include "ir/functor.h"

namespace ingot {

void ExprVisitor::visit(const Expr& e) { visit_children(e); }

void ExprVisitor::visit_children(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return;
    case ExprKind::kBinary: visit(e.as<BinaryNode>()->a); visit(e.as<BinaryNode>()->b); return;
    case ExprKind::kCompare: visit(e.as<CompareNode>()->a); visit(e.as<CompareNode>()->b); return;
    case ExprKind::kLogical: visit(e.as<LogicalNode>()->a); visit(e.as<LogicalNode>()->b); return;
    case ExprKind::kNot: visit(e.as<NotNode>()->a); return;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      visit(n->cond);
      visit(n->true_value);
      visit(n->false_value);
      return;
    }
    case ExprKind::kCast: visit(e.as<CastNode>()->value); return;
    case ExprKind::kCall:
      for (const Expr& a : e.as<CallNode>()->args) visit(a);
      return;
    case ExprKind::kTensorRead:
      for (const Expr& a : e.as<TensorReadNode>()->indices) visit(a);
      return;
    case ExprKind::kBufferLoad: visit(e.as<BufferLoadNode>()->index); return;
    case ExprKind::kReduce: visit(e.as<ReduceNode>()->source); return;
  }
}

Expr ExprMutator::mutate(const Expr& e) { return mutate_children(e); }

Expr ExprMutator::mutate_children(const Expr& e) {
  auto changed_list = [&](const std::vector<Expr>& xs, std::vector<Expr>& out) {
    bool changed = false;
    out.reserve(xs.size());
    for (const Expr& x : xs) {
      out.push_back(mutate(x));
      changed |= !out.back().same_as(x);
    }
    return changed;
  };
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return e;
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      Expr a = mutate(n->a), b = mutate(n->b);
      return a.same_as(n->a) && b.same_as(n->b) ? e : binary(n->op, a, b);
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      Expr a = mutate(n->a), b = mutate(n->b);
      return a.same_as(n->a) && b.same_as(n->b) ? e : compare(n->op, a, b);
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      Expr a = mutate(n->a), b = mutate(n->b);
      return a.same_as(n->a) && b.same_as(n->b) ? e : logical(n->op, a, b);
    }
    case ExprKind::kNot: {
      auto* n = e.as<NotNode>();
      Expr a = mutate(n->a);
      return a.same_as(n->a) ? e : logical_not(a);
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      Expr c = mutate(n->cond), t = mutate(n->true_value), f = mutate(n->false_value);
      return c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value) ? e : select(c, t, f);
    }
    case ExprKind::kCast: {
      auto* n = e.as<CastNode>();
      Expr v = mutate(n->value);
      return v.same_as(n->value) ? e : cast(n->dtype, v);
    }
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      std::vector<Expr> args;
      return changed_list(n->args, args) ? call(n->func, std::move(args)) : e;
    }
    case ExprKind::kTensorRead: {
      auto* n = e.as<TensorReadNode>();
      std::vector<Expr> idx;
      return changed_list(n->indices, idx) ? read(n->tensor, std::move(idx)) : e;
    }
    case ExprKind::kBufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      Expr i = mutate(n->index);
      return i.same_as(n->index) ? e : load(n->buffer, i);
    }
    case ExprKind::kReduce: {
      auto* n = e.as<ReduceNode>();
      Expr s = mutate(n->source);
      return s.same_as(n->source) ? e : reduce(n->op, s, n->axes);
    }
  }
  return e;
}

void for_each_node(const Expr& e, const std::function<void(const Expr&)>& fn) {
  struct Walker : ExprVisitor {
    const std::function<void(const Expr&)>& fn;
    explicit Walker(const std::function<void(const Expr&)>& f) : fn(f) {}
    void visit(const Expr& x) override {
      fn(x);
      visit_children(x);
    }
  } walker(fn);
  walker.visit(e);
}

Expr substitute(const Expr& e, const std::unordered_map<std::string, Expr>& vars) {
  struct Substituter : ExprMutator {
    const std::unordered_map<std::string, Expr>& vars;
    explicit Substituter(const std::unordered_map<std::string, Expr>& v) : vars(v) {}
    Expr mutate(const Expr& x) override {
      if (auto* v = x.as<VarNode>()) {
        auto it = vars.find(v->name);
        return it == vars.end() ? x : it->second;
      }
      return mutate_children(x);
    }
  } s(vars);
  return vars.empty() ? e : s.mutate(e);
}

bool uses_var(const Expr& e, const std::string& name) {
  bool found = false;
  for_each_node(e, [&](const Expr& x) {
    if (auto* v = x.as<VarNode>()) found |= v->name == name;
  });
  return found;
}

}  // namespace ingot
