#include "lower/kernels.h"

#include <set>
#include <string>

#include "ir/dtype.h"
#include "ir/functor.h"

namespace ingot {

namespace {

struct GlobalAccess {
  std::set<std::string> loaded, stored;
  std::set<std::string> prefetched;  // a kernel argument, but no bytes moved: its reader loads it
};

GlobalAccess global_access(const Stmt& s) {
  GlobalAccess a;
  auto note_loads = [&](const Expr& e) {
    for_each_node(e, [&](const Expr& n) {
      if (auto* l = n.as<BufferLoadNode>(); l && l->buffer->scope == MemoryScope::kGlobal)
        a.loaded.insert(l->buffer->name);
    });
  };
  for_each_stmt(s, [&](const Stmt& c) {
    if (auto* st = as<StoreNode>(c)) {
      if (st->buffer->scope == MemoryScope::kGlobal) a.stored.insert(st->buffer->name);
      note_loads(st->index);
      note_loads(st->value);
    } else if (auto* i = as<IfThenElseNode>(c)) {
      note_loads(i->cond);
    } else if (auto* p = as<PrefetchNode>(c)) {
      a.prefetched.insert(p->buffer->name);
    }
  });
  return a;
}

std::vector<Buffer> all_buffers(const LoopFunction& f) {
  std::vector<Buffer> all = f.inputs;
  all.insert(all.end(), f.outputs.begin(), f.outputs.end());
  all.insert(all.end(), f.workspace.begin(), f.workspace.end());
  return all;
}

int64_t buffer_bytes(const Buffer& b) { return b->num_elements() * dtype_bytes(b->dtype); }

}  // namespace

std::vector<LoopFunction> split_kernels(const LoopFunction& f) {
  std::vector<Stmt> bodies = kernel_bodies(f.body);
  std::vector<LoopFunction> kernels;
  for (size_t k = 0; k < bodies.size(); ++k) {
    GlobalAccess a = global_access(bodies[k]);
    LoopFunction kernel;
    kernel.name = bodies.size() == 1 ? f.name : f.name + "_k" + std::to_string(k);
    for (const Buffer& b : all_buffers(f)) {
      if (a.stored.count(b->name))
        kernel.outputs.push_back(b);
      else if (a.loaded.count(b->name) || a.prefetched.count(b->name))
        kernel.inputs.push_back(b);
    }
    kernel.body = bodies[k];
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

KernelTraffic kernel_traffic(const LoopFunction& f) {
  std::vector<GlobalAccess> access;
  for (const Stmt& body : kernel_bodies(f.body)) access.push_back(global_access(body));
  std::set<std::string> outputs;
  for (const Buffer& b : f.outputs) outputs.insert(b->name);
  KernelTraffic traffic;
  for (size_t k = 0; k < access.size(); ++k) {
    int64_t bytes = 0;
    for (const Buffer& b : all_buffers(f)) {
      const std::string& name = b->name;
      if (access[k].loaded.count(name) && !access[k].stored.count(name)) {
        traffic.bytes_read += buffer_bytes(b);
        bytes += buffer_bytes(b);
      }
      if (!access[k].stored.count(name)) continue;
      bool read_elsewhere = outputs.count(name) > 0;
      for (size_t other = 0; other < access.size() && !read_elsewhere; ++other)
        read_elsewhere = other != k && access[other].loaded.count(name) > 0;
      if (read_elsewhere) {
        traffic.bytes_written += buffer_bytes(b);
        bytes += buffer_bytes(b);
      }
    }
    traffic.kernel_bytes.push_back(bytes);
  }
  return traffic;
}

std::vector<Stmt> kernel_bodies(const Stmt& body) {
  std::vector<Stmt> kernels;
  auto* top = as<SeqNode>(body);
  if (!top) {
    if (body) kernels.push_back(body);
    return kernels;
  }
  std::vector<Stmt> current;
  for (const Stmt& s : top->stmts) {
    auto* b = as<BarrierNode>(s);
    if (b && b->barrier_kind == BarrierKind::kKernel) {
      if (!current.empty()) kernels.push_back(current.size() == 1 ? current[0] : seq(current));
      current.clear();
    } else {
      current.push_back(s);
    }
  }
  if (!current.empty()) kernels.push_back(current.size() == 1 ? current[0] : seq(current));
  return kernels;
}

StmtBuffers stmt_buffers(const Stmt& s) {
  StmtBuffers out;
  std::set<std::string> seen, allocated;
  auto note = [&](const Buffer& b) {
    if (!allocated.count(b->name) && seen.insert(b->name).second) out.used.push_back(b);
  };
  auto note_loads = [&](const Expr& e) {
    for_each_node(e, [&](const Expr& n) {
      if (auto* l = n.as<BufferLoadNode>()) note(l->buffer);
    });
  };
  for_each_stmt(s, [&](const Stmt& c) {
    if (auto* a = as<AllocateNode>(c)) {
      allocated.insert(a->buffer->name);
    } else if (auto* st = as<StoreNode>(c)) {
      note_loads(st->index);
      note_loads(st->value);
      note(st->buffer);
      if (!allocated.count(st->buffer->name)) out.written.insert(st->buffer->name);
    } else if (auto* i = as<IfThenElseNode>(c)) {
      note_loads(i->cond);
    } else if (auto* p = as<PrefetchNode>(c)) {
      note(p->buffer);
    }
  });
  return out;
}

}  // namespace ingot
