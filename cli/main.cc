// ingot's command line: one file per command under cli/, each a thin layer over the libraries.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ingot: a whole-model deep-learning compiler and auto-tuner"};
  app.set_version_flag("--version", std::string("ingot ") + INGOT_VERSION);
  app.require_subcommand(1);
  ingot::cli::add_lower_command(app);
  ingot::cli::add_run_command(app);
  ingot::cli::add_tune_command(app);
  ingot::cli::add_results_commands(app);
  ingot::cli::add_export_command(app);
  ingot::cli::add_verify_command(app);
  ingot::cli::add_plan_command(app);
  ingot::cli::add_cache_command(app);
  ingot::cli::add_costmodel_command(app);
  // CLI11 answers an unknown command with "A subcommand is required": name it and the known ones instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      found |= sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      std::cerr << "ingot: error: unknown command '" << argv[1] << "' (commands: " << known << ")\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "ingot: error: " << e.what() << "\n";
    return 1;
  }
  return ingot::cli::command_exit_status();
}

int& ingot::cli::command_exit_status() {
  static int status = 0;
  return status;
}
