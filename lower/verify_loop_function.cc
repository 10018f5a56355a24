#include "lower/verify_loop_function.h"

#include <set>
#include <unordered_map>

#include "ir/functor.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

bool outermost_kind(LoopKind k) { return k == LoopKind::kParallel || is_gpu_block(k); }

std::string describe(const ForNode* loop) {
  return std::string(loop_kind_name(loop->loop_kind)) + " loop '" + loop->name() + "'";
}

// One walk over the function: the statements in order, with the buffers and loop variables in scope and the loops,
// conditions and allocations around the statement at hand.
class Verifier : public ExprVisitor {
 public:
  explicit Verifier(const LoopFunction& f) : f_(f) {}

  std::vector<std::string> run() {
    check_arguments();
    if (!f_.body) {
      report("function", "has no body");
      return problems_;
    }
    auto* top = as<SeqNode>(f_.body);
    if (!top) {
      check_stmt(f_.body);
      return problems_;
    }
    for (const Stmt& s : top->stmts) {
      between_stages_ = as<BarrierNode>(s) || as<PrefetchNode>(s);
      direct_top_level_ = true;
      check_stmt(s);
      if (!between_stages_) ++stage_;
    }
    return problems_;
  }

 private:
  // ---- where, and reporting ----

  std::string where() const {
    if (between_stages_ && enclosing_.empty())
      return stage_ == 0 ? "top level, before stage 0" : "top level, after stage " + std::to_string(stage_ - 1);
    std::string path;
    for (const StmtNode* s : enclosing_) {
      if (s->kind == StmtKind::kFor)
        path += (path.empty() ? "" : " > ") + static_cast<const ForNode*>(s)->name();
      else if (s->kind == StmtKind::kIfThenElse)
        path += path.empty() ? "if" : " > if";
    }
    return "stage " + std::to_string(stage_) + (path.empty() ? "" : ", in " + path);
  }

  void report(const std::string& at, const std::string& what) {
    std::string message = at + ": " + what;
    if (seen_.insert(message).second) problems_.push_back(std::move(message));
  }
  void report(const std::string& what) { report(where(), what); }

  // The innermost loop or condition around the statement at hand, described; "" when there is none.
  std::string innermost_loop_or_condition() const {
    for (auto it = enclosing_.rbegin(); it != enclosing_.rend(); ++it) {
      if ((*it)->kind == StmtKind::kFor) return describe(static_cast<const ForNode*>(*it));
      if ((*it)->kind == StmtKind::kIfThenElse) return "a condition";
    }
    return "";
  }

  // The innermost enclosing loop that satisfies pred, or null.
  template <class Pred>
  const ForNode* enclosing_loop(Pred pred) const {
    for (auto it = enclosing_.rbegin(); it != enclosing_.rend(); ++it)
      if ((*it)->kind == StmtKind::kFor && pred(static_cast<const ForNode*>(*it)))
        return static_cast<const ForNode*>(*it);
    return nullptr;
  }

  // ---- buffers ----

  void check_arguments() {
    std::unordered_map<std::string, std::string> roles;
    auto add = [&](const std::vector<Buffer>& list, const std::string& role) {
      for (size_t n = 0; n < list.size(); ++n) {
        const Buffer& b = list[n];
        if (!b) {
          report("arguments", role + " #" + std::to_string(n) + " is null");
          continue;
        }
        if (b->scope != MemoryScope::kGlobal)
          report("arguments", role + " buffer '" + b->name + "' is " + memory_scope_name(b->scope) +
                                  "; inputs, outputs and workspace are global buffers");
        auto [it, fresh] = roles.emplace(b->name, role);
        if (!fresh) {
          report("arguments", "buffer name '" + b->name + "' is used twice (" + it->second + " and " + role + ")");
          continue;
        }
        buffers_[b->name] = b;
        if (role == "input") inputs_.insert(b.get());
      }
    };
    add(f_.inputs, "input");
    add(f_.outputs, "output");
    add(f_.workspace, "workspace");
  }

  // A use of b ("loaded", "stored", "prefetched"): an argument or an enclosing allocation, with its dtype.
  void use_buffer(const Buffer& b, const char* verb) {
    if (!b) return report(std::string("a null buffer is ") + verb);
    auto it = buffers_.find(b->name);
    if (it == buffers_.end())
      return report("buffer '" + b->name + "' is " + verb +
                    " but is not an input, output, workspace or enclosing allocation");
    if (it->second->dtype != b->dtype)
      report("buffer '" + b->name + "' is " + verb + " as " + dtype_name(b->dtype) + " but declared " +
             dtype_name(it->second->dtype));
  }

  void check_index(const Expr& index, const Buffer& b) {
    if (index && !is_int(index.dtype()))
      report("index into '" + (b ? b->name : std::string("?")) + "' is " + dtype_name(index.dtype()) +
             ", not an integer (indices are flat element offsets)");
    visit(index);
  }

  // ---- expressions ----

  void visit(const Expr& e) override {
    if (!e) return report("null expression");
    switch (e.kind()) {
      case ExprKind::kVar: {
        const std::string& name = e.as<VarNode>()->name;
        auto it = bound_.find(name);
        if (it == bound_.end() || it->second == 0)
          report("variable '" + name + "' is used outside any loop that binds it");
        return;
      }
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        use_buffer(n->buffer, "loaded");
        return check_index(n->index, n->buffer);
      }
      // Not descended into: what is inside is not loop IR either.
      case ExprKind::kTensorRead:
        return report("tensor read " + to_string(e) + " in loop IR (lowering replaces tensor reads by buffer loads)");
      case ExprKind::kReduce:
        return report("reduction " + to_string(e) + " in loop IR (lowering replaces reductions by loops)");
      default: return visit_children(e);
    }
  }

  // ---- statements ----

  void check_stmt(const Stmt& s) {
    if (!s) return report("null statement");
    bool direct_top_level = direct_top_level_;
    direct_top_level_ = false;
    switch (s->kind) {
      case StmtKind::kSeq:
        for (const Stmt& c : as<SeqNode>(s)->stmts) check_stmt(c);
        return;
      case StmtKind::kStore: {
        auto* n = as<StoreNode>(s);
        use_buffer(n->buffer, "stored");
        auto it = n->buffer ? buffers_.find(n->buffer->name) : buffers_.end();
        if (it != buffers_.end() && inputs_.count(it->second.get()))
          report("store into input buffer '" + n->buffer->name + "' (inputs are read-only)");
        check_index(n->index, n->buffer);
        visit(n->value);
        return;
      }
      case StmtKind::kAllocate: return check_allocate(as<AllocateNode>(s));
      case StmtKind::kIfThenElse: {
        auto* n = as<IfThenElseNode>(s);
        visit(n->cond);
        enclosing_.push_back(n);
        check_stmt(n->then_case);
        if (n->else_case) check_stmt(n->else_case);
        enclosing_.pop_back();
        return;
      }
      case StmtKind::kBarrier: return check_barrier(as<BarrierNode>(s)->barrier_kind, direct_top_level);
      case StmtKind::kPrefetch: {
        auto* n = as<PrefetchNode>(s);
        std::string around = innermost_loop_or_condition();
        if (!around.empty())
          report("prefetch of '" + (n->buffer ? n->buffer->name : std::string("?")) + "' inside " + around +
                 " (prefetches only go between top-level stages)");
        use_buffer(n->buffer, "prefetched");
        return;
      }
      case StmtKind::kFor: return check_loop(as<ForNode>(s));
    }
  }

  void check_allocate(const AllocateNode* n) {
    const Buffer& b = n->buffer;
    if (!b) return report("an allocation has a null buffer");
    if (b->scope == MemoryScope::kGlobal)
      report("allocation of global buffer '" + b->name +
             "' (global buffers are inputs, outputs or workspace, never allocated)");
    auto it = buffers_.find(b->name);
    if (it != buffers_.end()) report("allocation of '" + b->name + "' shadows another buffer of that name");
    Buffer shadowed = it == buffers_.end() ? nullptr : it->second;
    buffers_[b->name] = b;
    enclosing_.push_back(n);
    check_stmt(n->body);
    enclosing_.pop_back();
    if (shadowed)
      buffers_[b->name] = shadowed;
    else
      buffers_.erase(b->name);
  }

  void check_barrier(BarrierKind kind, bool direct_top_level) {
    switch (kind) {
      case BarrierKind::kKernel:
        if (!direct_top_level) {
          std::string around = innermost_loop_or_condition();
          if (around.empty() && !enclosing_.empty())
            around = "allocation '" + static_cast<const AllocateNode*>(enclosing_.back())->buffer->name + "'";
          report("kernel barrier inside " + (around.empty() ? "a nested sequence" : around) +
                 " (kernel barriers only separate top-level stages)");
        }
        return;
      case BarrierKind::kGrid: {
        std::string around = innermost_loop_or_condition();
        if (!around.empty())
          report("grid barrier inside " + around +
                 " (grid barriers only separate top-level stages, where every thread reaches them)");
        return;
      }
      case BarrierKind::kBlock: {
        const ForNode* thread = enclosing_loop([](const ForNode* l) { return is_gpu_thread(l->loop_kind); });
        bool in_condition = false;
        for (const StmtNode* s : enclosing_) in_condition |= s->kind == StmtKind::kIfThenElse;
        if (!enclosing_loop([](const ForNode* l) { return is_gpu_block(l->loop_kind); }))
          report("block barrier outside any block loop (block barriers stand inside a block-bound loop)");
        else if (thread)
          report("block barrier inside " + describe(thread) + " (block barriers stand outside thread loops)");
        else if (in_condition)
          report("block barrier inside a condition (every thread of the block must reach it)");
        return;
      }
    }
  }

  void check_loop(const ForNode* loop) {
    const LoopKind kind = loop->loop_kind;
    if (loop->var.dtype() != DType::kInt64)
      report("loop variable '" + loop->name() + "' is " + dtype_name(loop->var.dtype()) + ", not i64");
    if (outermost_kind(kind))
      for (auto it = enclosing_.rbegin(); it != enclosing_.rend(); ++it) {
        auto* outer = (*it)->kind == StmtKind::kFor ? static_cast<const ForNode*>(*it) : nullptr;
        if ((*it)->kind == StmtKind::kIfThenElse || (outer && !outermost_kind(outer->loop_kind))) {
          report(describe(loop) + " is inside " + (outer ? describe(outer) : "a condition") +
                 " (parallel and block loops are only the outermost loops of a stage)");
          break;
        }
      }
    if (is_gpu_thread(kind) && !enclosing_loop([](const ForNode* l) { return is_gpu_block(l->loop_kind); }))
      report(describe(loop) + " is not inside any block loop (thread loops appear only inside block loops)");
    if (is_gpu_block(kind) || is_gpu_thread(kind))
      if (const ForNode* same = enclosing_loop([&](const ForNode* l) { return l->loop_kind == kind; }))
        report(describe(loop) + " is inside " + describe(same) + " (one loop binds a GPU dimension at a time)");
    if (kind != LoopKind::kUnrolled)
      if (const ForNode* v = enclosing_loop([](const ForNode* l) { return l->loop_kind == LoopKind::kVectorized; }))
        report(describe(loop) + " is inside " + describe(v) +
               " (a vectorized loop holds no loops but unrolled ones, a register tile)");
    const std::string& name = loop->name();
    ++bound_[name];
    enclosing_.push_back(loop);
    check_stmt(loop->body);
    enclosing_.pop_back();
    --bound_[name];
  }

  const LoopFunction& f_;
  std::unordered_map<std::string, Buffer> buffers_;  // in scope: the arguments and the enclosing allocations
  std::set<const BufferNode*> inputs_;               // the input arguments (an allocation of the same name is not one)
  std::unordered_map<std::string, int> bound_;       // loop variable -> number of enclosing loops binding it
  std::vector<const StmtNode*> enclosing_;           // loops, conditions and allocations around the statement at hand
  size_t stage_ = 0;                                 // top-level statements so far that are not barriers or prefetches
  bool between_stages_ = false;                      // the top-level statement at hand is a barrier or a prefetch
  bool direct_top_level_ = false;                    // the statement at hand is an element of the top-level sequence
  std::vector<std::string> problems_;
  std::set<std::string> seen_;
};

}  // namespace

std::vector<std::string> loop_function_problems(const LoopFunction& f) {
  std::vector<std::string> problems = Verifier(f).run();
  if (f.body)
    for (const std::string& tile : explicit_vector_problems(f.body)) problems.push_back("explicit vectors: " + tile);
  return problems;
}

void verify_loop_function(const LoopFunction& f, const std::string& after_pass) {
  std::vector<std::string> problems = loop_function_problems(f);
  if (problems.empty()) return;
  constexpr size_t kShown = 20;
  std::string message = "the loop IR of '" + f.name + "' after " + after_pass + " breaks docs/loop_semantics.md:";
  for (size_t n = 0; n < problems.size() && n < kShown; ++n) message += "\n  " + problems[n];
  if (problems.size() > kShown) message += "\n  ... and " + std::to_string(problems.size() - kShown) + " more";
  throw LoopIrError(message);
}

}  // namespace ingot
