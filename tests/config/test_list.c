/* Lists of integers (workload.model.mlp_layers): YAML sequences, --set text
 * forms, dump round trip and located errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cfg_fixture.h"
#include "fabsim/config.h"

static cfg_doc *load(cfg_scenario *s, const char *yaml, const char *const *sets, int nsets) {
  return cfx_load(s, "l.yaml", yaml, sets, nsets);
}

static void expect_list(const cfg_u64_list *l, const uint64_t *want, uint32_t n) {
  assert_int_equal(l->n, n);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(l->v[i], want[i]);
}

static void expect_error(const char *yaml, const char *set, const char *msg) {
  cfx_expect_error("l.yaml", yaml, set, msg);
}

static const uint64_t mnist[] = {784, 128, 10};

static void test_yaml_forms(void **state) {
  static const char *const forms[] = {
      "workload.model.mlp_layers: [784, 128, 10]\n",
      "workload:\n  model:\n    mlp_layers:\n      - 784\n      - 128\n      - 10\n",
      "workload: {model: {mlp_layers: [784,128,10]}}\n",
      "workload.model.mlp_layers: 784, 128, 10\n",
      "workload.model.mlp_layers: \"[784, 128, 10]\"\n",
      "workload.model.mlp_layers: &w [784, 128, 10]\n",
  };
  (void)state;
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    cfg_scenario s;
    cfg_doc *doc;
    doc = load(&s, forms[i], NULL, 0);
    expect_list(&s.workload.model.mlp_layers, mnist, 3);
    cfg_free(&s, doc);
  }
}

static void test_defaults_and_sets(void **state) {
  static const char *const sets[] = {
      "workload.model.mlp_layers=[784,128,10]", "workload.model.mlp_layers=784,128,10",
      "workload.model.mlp_layers= [ 784 , 128 , 10 ] ", "workload.model.mlp_layers=[784, 128, 10]"};
  cfg_scenario s;
  cfg_doc *doc;
  (void)state;
  doc = load(&s, NULL, NULL, 0);
  assert_int_equal(s.workload.model.mlp_layers.n, 0);
  assert_null(s.workload.model.mlp_layers.v);
  cfg_free(&s, doc);
  for (int i = 0; i < 4; i++) {
    doc = load(&s, NULL, &sets[i], 1);
    expect_list(&s.workload.model.mlp_layers, mnist, 3);
    assert_string_equal(cfg_where(doc, "workload.model.mlp_layers").file, "--set");
    cfg_free(&s, doc);
  }
  /* a later --set replaces the file's list; empty forms clear it */
  const char *two[] = {"workload.model.mlp_layers=7", "workload.model.mlp_layers=[5, 6]"};
  doc = load(&s, "workload.model.mlp_layers: [1, 2, 3, 4]\n", two, 2);
  const uint64_t want[] = {5, 6};
  expect_list(&s.workload.model.mlp_layers, want, 2);
  cfg_free(&s, doc);
  const char *clear[] = {"workload.model.mlp_layers=[]", "workload.model.mlp_layers="};
  for (int i = 0; i < 2; i++) {
    doc = load(&s, "workload.model.mlp_layers: [1, 2]\n", &clear[i], 1);
    assert_int_equal(s.workload.model.mlp_layers.n, 0);
    cfg_free(&s, doc);
  }
}

static void test_dump_round_trip(void **state) {
  cfg_scenario s, again;
  cfg_doc *doc, *doc2;
  char *text, *text2;
  (void)state;
  doc = load(&s, "workload.model.mlp_layers: [784, 128, 10]\n", NULL, 0);
  text = cfg_dump(&s);
  assert_non_null(strstr(text, "\n    mlp_layers: [784, 128, 10]\n"));
  doc2 = load(&again, text, NULL, 0);
  expect_list(&again.workload.model.mlp_layers, mnist, 3);
  text2 = cfg_dump(&again);
  assert_string_equal(text, text2);
  sim_free(text);
  sim_free(text2);
  cfg_free(&again, doc2);
  cfg_free(&s, doc);
  doc = load(&s, NULL, NULL, 0);
  text = cfg_dump(&s);
  assert_non_null(strstr(text, "\n    mlp_layers: []\n"));
  sim_free(text);
  cfg_free(&s, doc);
  char *md = cfg_schema_markdown();
  assert_non_null(
      strstr(md, "| `workload.model.mlp_layers` | list of integers 1..1000000000 | `[]` |"));
  sim_free(md);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("workload.model.mlp_layers: [784, x, 10]\n", NULL,
               "l.yaml:1:34: workload.model.mlp_layers: item 2: expected an integer "
               "1..1000000000, got 'x'");
  expect_error("workload.model.mlp_layers:\n  - 784\n  - 0\n", NULL,
               "l.yaml:3:5: workload.model.mlp_layers: item 2: 0 is out of range (allowed "
               "1..1000000000)");
  expect_error("workload.model.mlp_layers: [784, [1], 10]\n", NULL,
               "l.yaml:1:34: workload.model.mlp_layers: item 2: expected an integer, got a list");
  expect_error("workload.model.mlp_layers: [784, ~]\n", NULL,
               "l.yaml:1:34: workload.model.mlp_layers: item 2: missing value; expected an "
               "integer 1..1000000000");
  expect_error("workload.model.mlp_layers: {a: 1}\n", NULL,
               "l.yaml:1:28: workload.model.mlp_layers: expected a value (list of integers "
               "1..1000000000), got a mapping");
  expect_error("workload.model.mlp_layers: [1]\nworkload.model.mlp_layers: [2]\n", NULL,
               "l.yaml:2:28: workload.model.mlp_layers: duplicate key (first set at line 1, "
               "column 28)");
  expect_error(NULL, "workload.model.mlp_layers=[784,-1]",
               "--set:1:32: workload.model.mlp_layers: item 2: -1 is out of range (allowed "
               "1..1000000000)");
  expect_error(NULL, "workload.model.mlp_layers=784,,10",
               "--set:1:27: workload.model.mlp_layers: item 2: missing value; expected an "
               "integer 1..1000000000");
  expect_error(NULL, "workload.model.mlp_layers=\"[784, 10\"",
               "--set:1:27: workload.model.mlp_layers: a list opened with '[' must end with ']'");
  expect_error(NULL, "workload.model.mlp_layers=[1,2",
               "--set:1:27: workload.model.mlp_layers: YAML syntax error: did not find "
               "expected ',' or ']' (while parsing a flow sequence)");
  /* more than 1,024 items, as a YAML sequence and as text */
  char big[8 * 1100 + 64];
  size_t o = (size_t)snprintf(big, sizeof big, "workload.model.mlp_layers: [");
  for (int i = 0; i < 1025; i++)
    o += (size_t)snprintf(big + o, sizeof big - o, "%s1", i ? "," : "");
  snprintf(big + o, sizeof big - o, "]\n");
  expect_error(big, NULL, "l.yaml:1:2077: workload.model.mlp_layers: more than 1024 items");
  char set[8 * 1100];
  o = (size_t)snprintf(set, sizeof set, "workload.model.mlp_layers=");
  for (int i = 0; i < 1025; i++)
    o += (size_t)snprintf(set + o, sizeof set - o, "%s1", i ? "," : "");
  expect_error(NULL, set, "--set:1:27: workload.model.mlp_layers: more than 1024 items");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_yaml_forms),
      cmocka_unit_test(test_defaults_and_sets),
      cmocka_unit_test(test_dump_round_trip),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
