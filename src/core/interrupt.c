/* The process's one Ctrl-C handler: it notes the interrupt for the
 * library's safe points (fabsim/ev.h, sim_interrupts_arm). */
#include <signal.h>

#include "fabsim/ev.h"

static void on_signal(int sig) {
  if (!sim_interrupt_pending()) sim_interrupt_note();
  else if (signal(sig, SIG_DFL) != SIG_ERR) raise(sig);
}

void sim_interrupts_arm(sim_interrupts *v) {
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sim_interrupt_clear();
  sigaction(SIGINT, &sa, &v->old_int);
  sigaction(SIGTERM, &sa, &v->old_term);
  v->armed = true;
}

void sim_interrupts_disarm(sim_interrupts *v) {
  if (!v->armed) return;
  sigaction(SIGINT, &v->old_int, NULL);
  sigaction(SIGTERM, &v->old_term, NULL);
  sim_interrupt_clear();
  v->armed = false;
}
