#include "refgate/app/app.hpp"

int main(int argc, char** argv) { return refgate::app::run_cli(argc, argv); }
