// Visitors and mutators over expressions. A mutator overrides only the node kinds it cares about; the
// default rebuilds a node only when a child changed, so a pass that changes nothing returns the same nodes.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "ir/expr.h"

namespace ingot {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  virtual void visit(const Expr& e);

 protected:
  virtual void visit_children(const Expr& e);
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  virtual Expr mutate(const Expr& e);

 protected:
  // Rebuilds e from mutated children (returns e itself when no child changed).
  Expr mutate_children(const Expr& e);
};

// Calls fn on every node, parents before children.
void for_each_node(const Expr& e, const std::function<void(const Expr&)>& fn);

// Replaces variables by name.
Expr substitute(const Expr& e, const std::unordered_map<std::string, Expr>& vars);

// True when e reads any variable in names (by name).
bool uses_var(const Expr& e, const std::string& name);

}  // namespace ingot
