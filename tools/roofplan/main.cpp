// tools/roofplan/main.cpp — the roofplan command-line interface (run.cpp; the subcommands, one file each).
#include "run.hpp"

int main(int argc, char** argv) { return roofplan::cli::run(argc, argv); }
