// ingot's command line: one file per command under cli/, each a thin layer over the libraries.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ingot: a whole-model deep-learning compiler and auto-tuner"};
  app.require_subcommand(1);
  ingot::cli::add_lower_command(app);
  ingot::cli::add_run_command(app);
  ingot::cli::add_tune_command(app);
  ingot::cli::add_results_commands(app);
  ingot::cli::add_export_command(app);
  ingot::cli::add_verify_command(app);
  ingot::cli::add_plan_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "ingot: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
