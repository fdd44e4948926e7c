/* Readable, stable names and their inverse.
 *
 * gpu<g>, nvs<node>, nic<i>, pcisw<g> (GPU g's PCIe switch, N > G), and
 * (p<plane>.)leaf|spine|core<index> for switches (the prefix only on multi-plane fabrics); a link
 * is "<a>-<b>", and a link of a bundle (the m > 1 parallel spine-core links of a partial 3-tier
 * build, fattree.c) "<a>-<b>/<r>", r its position 0 .. m-1 (the bare
 * "<a>-<b>" names no single link there). A channel (one direction, a port
 * of its source) is named as its link with its source first.
 * Lookup parses the name into the layout's index arithmetic, so finding a
 * vertex is O(length of the name) and a link O(ports of its smaller end);
 * nothing scans the vertex or link arrays. Parsing is strict: exactly the
 * names topo_vertex_name produces are accepted (no leading zeros, no sign, no
 * spaces, prefix present iff multi-plane).
 */
#include <stdio.h>
#include <string.h>

#include "topo/topo_internal.h"

static const char *const tier_word[4] = {"?", "leaf", "spine", "core"};

const char *topo_vertex_name(const topo *t, uint32_t v, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  if (v >= t->nvertices) {
    snprintf(buf, n, "?%u", v);
    return buf;
  }
  const topo_vertex *x = &t->vert[v];
  switch (x->kind) {
  case TOPO_GPU: snprintf(buf, n, "gpu%u", x->index); break;
  case TOPO_NVSWITCH: snprintf(buf, n, "nvs%u", x->index); break;
  case TOPO_NIC: snprintf(buf, n, "nic%u", x->index); break;
  case TOPO_PCIE_SWITCH: snprintf(buf, n, "pcisw%u", x->index); break;
  case TOPO_SWITCH:
    if (t->kind == CFG_TOPO_MULTI_PLANE)
      snprintf(buf, n, "p%d.%s%u", x->plane, tier_word[x->tier], x->index);
    else snprintf(buf, n, "%s%u", tier_word[x->tier], x->index);
    break;
  }
  return buf;
}

/* Whether link l is one of a bundle's parallel links. */
static bool in_bundle(const topo *t, uint32_t l) {
  const topo_link *k = &t->link[l];
  return t->s.bundle > 1 && k->kind == TOPO_LINK_FABRIC && t->vert[k->b].tier == TOPO_TIER_CORE;
}

/* "<from>-<to>" for link l, "/<r>" after it in a bundle. */
static const char *ends_name(const topo *t, uint32_t l, uint32_t from, uint32_t to, char *buf,
                             size_t n) {
  char a[48], b[48];
  topo_vertex_name(t, from, a, sizeof a);
  topo_vertex_name(t, to, b, sizeof b);
  if (in_bundle(t, l)) snprintf(buf, n, "%s-%s/%u", a, b, topo__bundle_pos(t, l));
  else snprintf(buf, n, "%s-%s", a, b);
  return buf;
}

const char *topo_link_name(const topo *t, uint32_t l, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  if (l >= t->nlinks) {
    snprintf(buf, n, "?link%u", l);
    return buf;
  }
  return ends_name(t, l, t->link[l].a, t->link[l].b, buf, n);
}

const char *topo_channel_name(const topo *t, uint32_t ch, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  if (ch / 2 >= t->nlinks) {
    snprintf(buf, n, "?channel%u", ch);
    return buf;
  }
  return ends_name(t, ch / 2, topo_channel_src(t, ch), topo_channel_dst(t, ch), buf, n);
}

/* Decimal without sign or leading zeros; advances *i. */
static bool parse_u32(const char *s, size_t len, size_t *i, uint32_t *out) {
  size_t start = *i;
  uint64_t x = 0;
  while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
    x = x * 10 + (uint64_t)(s[*i] - '0');
    if (x > UINT32_MAX) return false;
    (*i)++;
  }
  if (*i == start || (s[start] == '0' && *i - start > 1)) return false;
  *out = (uint32_t)x;
  return true;
}

static bool eat(const char *s, size_t len, size_t *i, const char *word) {
  size_t w = strlen(word);
  if (len - *i < w || memcmp(s + *i, word, w) != 0) return false;
  *i += w;
  return true;
}

int topo__parse_vertex(const topo *t, const char *s, size_t len, uint32_t *v) {
  size_t i = 0;
  uint32_t plane = 0, idx;
  bool has_plane = false;
  if (eat(s, len, &i, "pcisw")) {
    if (!parse_u32(s, len, &i, &idx) || i != len || !topo__pcie_switched(t) || idx >= t->gpus)
      return SIM_ENOENT;
    *v = t->v_psw + idx;
    return SIM_OK;
  }
  if (eat(s, len, &i, "p")) {
    if (!parse_u32(s, len, &i, &plane) || !eat(s, len, &i, ".")) return SIM_ENOENT;
    has_plane = true;
  }
  uint32_t tier = 0;
  topo_vkind kind = TOPO_SWITCH;
  if (eat(s, len, &i, "gpu")) kind = TOPO_GPU;
  else if (eat(s, len, &i, "nvs")) kind = TOPO_NVSWITCH;
  else if (eat(s, len, &i, "nic")) kind = TOPO_NIC;
  else if (eat(s, len, &i, "leaf")) tier = TOPO_TIER_LEAF;
  else if (eat(s, len, &i, "spine")) tier = TOPO_TIER_SPINE;
  else if (eat(s, len, &i, "core")) tier = TOPO_TIER_CORE;
  else return SIM_ENOENT;
  if (!parse_u32(s, len, &i, &idx) || i != len) return SIM_ENOENT;

  if (kind != TOPO_SWITCH) {
    if (has_plane) return SIM_ENOENT;
    uint32_t count = kind == TOPO_GPU ? t->gpus : kind == TOPO_NIC ? t->nics : t->nodes;
    uint32_t base = kind == TOPO_GPU ? t->v_gpu : kind == TOPO_NIC ? t->v_nic : t->v_nvs;
    if (idx >= count) return SIM_ENOENT;
    *v = base + idx;
    return SIM_OK;
  }
  if (has_plane != (t->kind == CFG_TOPO_MULTI_PLANE)) return SIM_ENOENT;
  uint32_t x = topo_switch_vertex(t, plane, tier, idx);
  if (x == UINT32_MAX) return SIM_ENOENT;
  *v = x;
  return SIM_OK;
}

int topo_find_vertex(const topo *t, const char *name, uint32_t *v) {
  if (!name) return SIM_ENOENT;
  return topo__parse_vertex(t, name, strlen(name), v);
}

/* "<a>-<b>[/<r>]" -> the link and the channel leaving a. SIM_ENOENT when
 * it names no link; SIM_EINVAL for the bare "<a>-<b>" of a bundle (it names
 * m links). O(length + ports of the smaller end). */
static int parse_link(const topo *t, const char *name, uint32_t *l, uint32_t *ch) {
  if (!name) return SIM_ENOENT;
  const char *dash = strchr(name, '-'), *slash = dash ? strchr(dash, '/') : NULL;
  if (!dash) return SIM_ENOENT;
  size_t blen = slash ? (size_t)(slash - dash - 1) : strlen(dash + 1), i = 0;
  uint32_t a, b, r = 0, first;
  if (topo__parse_vertex(t, name, (size_t)(dash - name), &a) != SIM_OK ||
      topo__parse_vertex(t, dash + 1, blen, &b) != SIM_OK)
    return SIM_ENOENT;
  if (slash && (!parse_u32(slash + 1, strlen(slash + 1), &i, &r) || slash[1 + i] != '\0'))
    return SIM_ENOENT;
  if (topo_link_between(t, a, b, &first) != SIM_OK) return SIM_ENOENT;
  bool bundle = in_bundle(t, first);
  if (bundle && !slash) return SIM_EINVAL;
  if (!bundle && slash) return SIM_ENOENT;
  /* a bundle's links are consecutive ids, in position order (fattree.c) */
  if (bundle && (r >= t->s.bundle || topo__bundle_pos(t, first) != 0)) return SIM_ENOENT;
  *l = first + r;
  *ch = 2 * *l + (t->link[*l].a == a ? 0 : 1);
  return SIM_OK;
}

int topo_find_link(const topo *t, const char *name, uint32_t *l) {
  uint32_t ch;
  return parse_link(t, name, l, &ch);
}

int topo_find_channel(const topo *t, const char *name, uint32_t *ch) {
  uint32_t l;
  return parse_link(t, name, &l, ch);
}
