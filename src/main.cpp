#include "refgate/app/app.hpp"

int main(int argc, char** argv) { return refgate::run_cli(argc, argv); }
