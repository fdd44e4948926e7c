/* flows.csv (output.flows): one row per transfer the run's backend
 * reported, in (start, id) order: times in integer picoseconds, so fct_ps
 * is exactly end_ps - start_ps; names as fabsim topo gives them. The
 * database's flows table holds the same rows (db.c). */
#include <stdio.h>
#include <string.h>

#include "output/out_internal.h"

/* A transfer's end: a GPU by its vertex; a storage endpoint (past the
 * GPUs) by its path's end vertex `v`; without one, endpointN. buf: 64. */
static void endpoint_name(const topo *t, uint32_t gpu, uint32_t v, char *buf) {
  if (gpu < topo_gpu_count(t)) topo_vertex_name(t, topo_gpu_vertex(t, gpu), buf, 64);
  else if (v != UINT32_MAX) topo_vertex_name(t, v, buf, 64);
  else snprintf(buf, 64, "endpoint%u", gpu);
}

void out__flow_text_of(const run_flows *f, const topo *t, const tel_flow *r, out__flow_text *o) {
  char v[64];
  o->path[0] = o->src_nic[0] = o->dst_nic[0] = '\0';
  size_t len = 0;
  for (uint32_t j = 0; j < r->npath; j++) {
    if (j == 0) {
      topo_vertex_name(t, topo_channel_src(t, r->path[0]), v, sizeof v);
      len += (size_t)snprintf(o->path + len, sizeof o->path - len, "%s", v);
    }
    topo_vertex_name(t, topo_channel_dst(t, r->path[j]), v, sizeof v);
    if (len < sizeof o->path)
      len += (size_t)snprintf(o->path + len, sizeof o->path - len, ">%s", v);
  }
  endpoint_name(t, r->src_gpu, r->npath ? topo_channel_src(t, r->path[0]) : UINT32_MAX, o->src);
  endpoint_name(t, r->dst_gpu, r->npath ? topo_channel_dst(t, r->path[r->npath - 1]) : UINT32_MAX,
                o->dst);
  if (r->src_nic != UINT32_MAX) topo_vertex_name(t, topo_nic_vertex(t, r->src_nic), o->src_nic, 64);
  if (r->dst_nic != UINT32_MAX) topo_vertex_name(t, topo_nic_vertex(t, r->dst_nic), o->dst_nic, 64);
  o->cls = f->cfg->fabric.classes.v[r->tclass & 7].name;
  uint32_t g = r->src_gpu < topo_gpu_count(t) ? r->src_gpu : r->dst_gpu; /* a read: its reader */
  uint32_t job = f->job_of_gpu && g < topo_gpu_count(t) ? f->job_of_gpu[g] : UINT32_MAX;
  o->job = job != UINT32_MAX ? f->cfg->jobs.v[job].name : "";
}

void out__flows_csv(out__buf *b, const run_flows *f, const topo *t) {
  out__puts(b,
            "id,start_ps,end_ps,fct_ps,src,dst,src_nic,dst_nic,bytes,class,job,phase,path,"
            "spread\n");
  out__flow_text o;
  for (size_t i = 0; i < f->n; i++) {
    const tel_flow *r = &f->v[i];
    out__flow_text_of(f, t, r, &o);
    out__printf(b, "%zu,%llu,%llu,%llu,", i + 1, (unsigned long long)r->start,
                (unsigned long long)r->end, (unsigned long long)(r->end - r->start));
    const char *text[] = {o.src, o.dst, o.src_nic, o.dst_nic};
    for (int k = 0; k < 4; k++) {
      out__csv_field(b, text[k]);
      out__puts(b, ",");
    }
    out__printf(b, "%llu,", (unsigned long long)r->bytes);
    out__csv_field(b, o.cls);
    out__puts(b, ",");
    out__csv_field(b, o.job);
    out__printf(b, ",%llu,", (unsigned long long)r->phase);
    out__csv_field(b, o.path);
    out__printf(b, ",%d\n", f->spread ? 1 : 0);
  }
}
