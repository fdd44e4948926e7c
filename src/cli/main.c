/* fabsim command line (verbs are added in cli_*.c). */
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "fabsim: not built yet\n");
  return 2;
}
