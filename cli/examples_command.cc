// `ingot examples`: lists the built-in example programs with their sizes.
#include <iostream>

#include "cli/commands.h"
#include "workloads/examples.h"

namespace ingot::cli {

void add_examples_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("examples", "List the built-in example programs");
  cmd->callback([] {
    for (const ExampleProgram& e : example_programs()) {
      Program p = e.make_default();
      std::cout << e.name << ": " << e.description << " (computes: " << p.computes().size() << ")\n";
    }
  });
}

}  // namespace ingot::cli
