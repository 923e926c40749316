/* Exercises the vmaf_rs C ABI as FFmpeg's filter does: options, configure, send/receive with
 * strided planes, lent pictures, flush/drain, finish (log + score line), errors and NULL handling.
 * Built and run by scripts/capi-test.sh (under valgrind); exits non-zero on any failure. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmaf_rs.h"

static int failures;
#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                  \
            fprintf(stderr, "\n");                         \
            failures++;                                    \
        }                                                  \
    } while (0)

static int info_lines;
static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level == VMAF_RS_LOG_INFO && strstr(msg, "VMAF score: "))
        info_lines++;
    fprintf(stderr, "[vmaf_rs %d] %s", level, msg);
}

static int released;
static void release_cb(void *opaque)
{
    (*(int *)opaque)++;
    released++;
}

enum { W = 97, H = 61, PITCH = 128, FRAMES = 7 };

static void fill(uint8_t *buf, int frame, int noise)
{
    unsigned s = 1234u + (unsigned)frame;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int v = (x * 2 + y + frame * 3) & 255;
            if (noise) {
                s = s * 1103515245u + 12345u;
                v += (int)((s >> 16) % 21) - 10;
            }
            buf[y * PITCH + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

static VmafRsPicture pic(const uint8_t *luma)
{
    VmafRsPicture p;
    memset(&p, 0, sizeof(p));
    p.data[0] = luma;
    p.pitch[0] = PITCH;
    p.width = W;
    p.height = H;
    p.bpc = 8;
    p.bytes_per_sample = 1;
    p.layout = VMAF_RS_LAYOUT_GRAY;
    p.memory = VMAF_RS_MEMORY_HOST;
    return p;
}

int main(int argc, char **argv)
{
    const char *log_path = argc > 1 ? argv[1] : "capi_log.json";
    VmafRsContext *ctx = NULL;

    /* NULL handling */
    vmaf_rs_free(NULL);
    vmaf_rs_free(&ctx);
    CHECK(vmaf_rs_new(NULL, NULL, NULL) < 0, "new(NULL) must fail");
    CHECK(vmaf_rs_set_option(NULL, "pool", "mean") < 0, "NULL ctx must fail");
    CHECK(strlen(vmaf_rs_version()) > 0, "version");

    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0 && ctx, "new");

    /* bad options: clear errors, negative errno */
    CHECK(vmaf_rs_set_option(ctx, "n_threads", "-3") == -EINVAL, "n_threads=-3");
    CHECK(strstr(vmaf_rs_last_error(ctx), "n_threads") != NULL, "error names the option: %s", vmaf_rs_last_error(ctx));
    CHECK(vmaf_rs_set_option(ctx, "log_fmt", "yaml") < 0, "log_fmt=yaml");
    CHECK(vmaf_rs_set_option(ctx, "nonsense", "1") < 0, "unknown key");
    CHECK(vmaf_rs_set_option(ctx, "model", "version=vmaf_v9") < 0 ||
          vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) < 0, "unknown model version");
    vmaf_rs_free(&ctx);
    CHECK(ctx == NULL, "free sets NULL");
    vmaf_rs_free(&ctx); /* a second free through the same pointer is a no-op */

    /* out-of-range integers where C might pass anything: refused, not undefined behaviour */
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_configure(ctx, W, H, 8, 64) == -EINVAL, "layout 64 must be refused");
    CHECK(strstr(vmaf_rs_last_error(ctx), "VMAF_RS_LAYOUT_") != NULL, "names the values: %s",
          vmaf_rs_last_error(ctx));
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));
    {
        uint8_t *buf = calloc(PITCH * H, 1);
        VmafRsPicture r = pic(buf), d = pic(buf);
        r.memory = 7;
        CHECK(vmaf_rs_send(ctx, &r, &d) == -EINVAL, "memory kind 7 must be refused");
        r = pic(buf);
        r.layout = 9;
        CHECK(vmaf_rs_send(ctx, &r, &d) == -EINVAL, "layout 9 must be refused");
        free(buf);
    }
    vmaf_rs_free(&ctx);

    /* calls in the wrong order, NULL outputs and impossible values: errors, never a crash */
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    {
        uint8_t *buf = calloc(PITCH * H, 1);
        VmafRsPicture r = pic(buf), d = pic(buf);
        VmafRsFrameScores s;
        double score;
        CHECK(vmaf_rs_send(ctx, &r, &d) < 0, "send before configure");
        CHECK(vmaf_rs_receive(ctx, &s) < 0, "receive before configure");
        CHECK(vmaf_rs_flush(ctx) < 0, "flush before configure");
        CHECK(vmaf_rs_frame_scored(ctx, 0) < 0, "frame_scored before configure");
        CHECK(vmaf_rs_set_option(ctx, "n_subsample", "3") == 0, "n_subsample");
        CHECK(vmaf_rs_pooled_score(ctx, 0, &score) < 0, "pooled score before configure");
        CHECK(vmaf_rs_set_option(ctx, NULL, "1") < 0 && vmaf_rs_set_option(ctx, "pool", NULL) < 0,
              "NULL key or value");
        CHECK(vmaf_rs_configure(ctx, 0, H, 8, VMAF_RS_LAYOUT_GRAY) < 0, "width 0");
        CHECK(vmaf_rs_configure(ctx, 1u << 20, 1u << 20, 8, VMAF_RS_LAYOUT_GRAY) < 0, "2^20 x 2^20");
        CHECK(vmaf_rs_configure(ctx, W, H, 0, VMAF_RS_LAYOUT_GRAY) < 0, "bpc 0");
        CHECK(vmaf_rs_configure(ctx, W, H, 4000000000u, VMAF_RS_LAYOUT_GRAY) < 0, "bpc 4e9");
        CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));
        CHECK(vmaf_rs_set_option(ctx, "pool", "min") < 0, "option after configure");
        CHECK(vmaf_rs_frame_scored(ctx, 0) == 1 && vmaf_rs_frame_scored(ctx, 4) == 0 &&
              vmaf_rs_frame_scored(ctx, 6) == 1, "n_subsample=3 scores frames 0, 3, 6...");
        CHECK(vmaf_rs_send(ctx, NULL, NULL) < 0, "send(NULL, NULL)");
        CHECK(vmaf_rs_receive(ctx, NULL) < 0, "receive into NULL");
        CHECK(vmaf_rs_pooled_score(ctx, 0, NULL) < 0, "pooled score into NULL");
        CHECK(vmaf_rs_pooled_score(ctx, 0, &score) < 0, "pooled score with no frame");
        r.bytes_per_sample = 3;
        CHECK(vmaf_rs_send(ctx, &r, &d) == -EINVAL, "bytes_per_sample 3");
        r = pic(buf);
        r.pitch[0] = -PITCH;
        CHECK(vmaf_rs_send(ctx, &r, &d) < 0, "negative pitch");
        r = pic(buf);
        r.bpc = 17;
        CHECK(vmaf_rs_send(ctx, &r, &d) < 0, "bpc 17");
        r = pic(buf);
        r.shift = 4;
        CHECK(vmaf_rs_send(ctx, &r, &d) < 0, "8 bits shifted by 4 in one byte");
        r = pic(buf);
        CHECK(vmaf_rs_send(ctx, &r, &d) == 0, "a good pair still works: %s", vmaf_rs_last_error(ctx));
        CHECK(vmaf_rs_finish(ctx) == 0, "finish without flush: %s", vmaf_rs_last_error(ctx));
        free(buf);
    }
    CHECK(vmaf_rs_last_error(NULL) != NULL && vmaf_rs_frames_scored(NULL) == 0, "NULL getters");
    CHECK(vmaf_rs_flush(NULL) < 0 && vmaf_rs_finish(NULL) < 0 && vmaf_rs_frame_scored(NULL, 0) < 0,
          "NULL context");
    vmaf_rs_free(&ctx);

    /* a zero-frame context (FFmpeg's probe graph) does nothing at finish */
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_set_option(ctx, "log_path", "never_written.json") == 0, "log_path");
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));
    CHECK(vmaf_rs_finish(ctx) == 0, "finish");
    FILE *f = fopen("never_written.json", "r");
    CHECK(f == NULL, "zero-frame context wrote a log");
    if (f) fclose(f);
    vmaf_rs_free(&ctx);

    /* a real run */
    info_lines = 0;
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_set_option(ctx, "n_threads", "2") == 0, "n_threads");
    CHECK(vmaf_rs_set_option(ctx, "log_fmt", "json") == 0, "log_fmt");
    CHECK(vmaf_rs_set_option(ctx, "log_path", log_path) == 0, "log_path");
    CHECK(vmaf_rs_set_option(ctx, "model", "version=vmaf_v0.6.1:name=vmaf|version=vmaf_v0.6.1neg:name=neg") == 0,
          "model: %s", vmaf_rs_last_error(ctx));
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));

    uint8_t *ref = calloc(PITCH * H, 1), *dis = calloc(PITCH * H, 1), *small = calloc(PITCH * H, 1);
    int received = 0;
    uint64_t expect = 0;
    for (int i = 0; i < FRAMES; i++) {
        fill(ref, i, 0);
        fill(dis, i, 1);
        VmafRsPicture r = pic(ref), d = pic(dis);
        CHECK(vmaf_rs_send(ctx, &r, &d) == 0, "send %d: %s", i, vmaf_rs_last_error(ctx));
        VmafRsFrameScores s;
        int ret;
        while ((ret = vmaf_rs_receive(ctx, &s)) == 0) {
            CHECK(s.index == expect, "frame order: got %llu want %llu", (unsigned long long)s.index, (unsigned long long)expect);
            expect++;
            received++;
            CHECK(!strcmp(s.names[s.count - 1], "neg") && !strcmp(s.names[s.count - 2], "vmaf"), "model names last");
            for (uint32_t k = 0; k < s.count; k++)
                CHECK(isfinite(s.values[k]), "value %s finite", s.names[k]);
        }
        CHECK(ret == -EAGAIN, "receive before flush returns EAGAIN, got %d", ret);
    }
    /* mismatched picture: clear error, stream continues to be usable */
    VmafRsPicture bad = pic(small);
    bad.width = W - 1;
    VmafRsPicture good = pic(ref);
    CHECK(vmaf_rs_send(ctx, &good, &bad) < 0, "mismatched sizes must fail");
    CHECK(strstr(vmaf_rs_last_error(ctx), "differ") || strstr(vmaf_rs_last_error(ctx), "configured"),
          "mismatch message: %s", vmaf_rs_last_error(ctx));
    bad = pic(NULL);
    CHECK(vmaf_rs_send(ctx, &good, &bad) < 0, "NULL plane must fail");

    /* release callbacks run exactly once, also when the call fails */
    int r_count = 0, d_count = 0;
    released = 0;
    good = pic(ref);
    good.release = release_cb;
    good.release_opaque = &r_count;
    bad = pic(dis);
    bad.width = W - 1;
    bad.release = release_cb;
    bad.release_opaque = &d_count;
    CHECK(vmaf_rs_send(ctx, &good, &bad) < 0, "mismatch fails");
    CHECK(r_count == 1 && d_count == 1, "release once each on error (%d, %d)", r_count, d_count);
    /* CUDA pictures without a CUDA context (or without CUDA) fail cleanly and are released */
    good.memory = VMAF_RS_MEMORY_CUDA;
    bad = good;
    bad.release_opaque = &d_count;
    CHECK(vmaf_rs_send(ctx, &good, &bad) < 0, "CUDA frames without a context must fail");
    CHECK(r_count == 2 && d_count == 2, "CUDA pictures released on error (%d, %d)", r_count, d_count);
    CHECK(strstr(vmaf_rs_last_error(ctx), "CUDA") != NULL, "message: %s", vmaf_rs_last_error(ctx));
    fprintf(stderr, "vmaf_rs_has_cuda: %d\n", vmaf_rs_has_cuda());

    CHECK(vmaf_rs_flush(ctx) == 0, "flush");
    VmafRsFrameScores s;
    int ret;
    while ((ret = vmaf_rs_receive(ctx, &s)) == 0) {
        CHECK(s.index == expect, "order after flush");
        expect++;
        received++;
    }
    CHECK(ret == VMAF_RS_EOF, "EOF after drain, got %d", ret);
    CHECK(received == FRAMES, "received %d of %d", received, FRAMES);
    CHECK(vmaf_rs_frames_scored(ctx) == FRAMES, "frames_scored");
    double score = -1;
    CHECK(vmaf_rs_pooled_score(ctx, 0, &score) == 0 && score >= 0 && score <= 100, "pooled score %f", score);
    CHECK(vmaf_rs_pooled_score(ctx, 7, &score) < 0, "pooled score of a missing model fails");
    CHECK(vmaf_rs_finish(ctx) == 0, "finish: %s", vmaf_rs_last_error(ctx));
    CHECK(info_lines == 2, "one 'VMAF score' line per model, got %d", info_lines);
    CHECK(vmaf_rs_finish(ctx) == 0 && info_lines == 2, "finish is idempotent");
    f = fopen(log_path, "r");
    CHECK(f != NULL, "log written");
    if (f) {
        char buf[256] = {0};
        CHECK(fread(buf, 1, sizeof(buf) - 1, f) > 0 && strstr(buf, "\"frames\""), "log looks like JSON");
        fclose(f);
    }
    CHECK(vmaf_rs_send(ctx, &good, &good) < 0, "send after flush fails");
    vmaf_rs_free(&ctx);

    /* unwritable log path fails at configure, before any frame */
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_set_option(ctx, "log_path", "/nonexistent-dir/x.json") == 0, "log_path");
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) < 0, "unwritable log path must fail");
    CHECK(strstr(vmaf_rs_last_error(ctx), "/nonexistent-dir/x.json") != NULL, "message names the path: %s", vmaf_rs_last_error(ctx));
    vmaf_rs_free(&ctx);

    /* ladder: two renditions (the distorted and the reference itself) against one reference */
    info_lines = 0;
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_set_option(ctx, "renditions", "2") == 0, "renditions=2");
    CHECK(vmaf_rs_set_option(ctx, "renditions", "0") < 0, "renditions=0");
    CHECK(vmaf_rs_set_option(ctx, "log_path", "ladder.json") == 0, "log_path");
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) < 0 &&
          strstr(vmaf_rs_last_error(ctx), "%v") != NULL, "a ladder's log path needs %%v: %s",
          vmaf_rs_last_error(ctx));
    vmaf_rs_free(&ctx);
    CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0, "new");
    CHECK(vmaf_rs_set_option(ctx, "renditions", "2") == 0, "renditions=2");
    CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));
    {
        uint64_t next[2] = {0, 0};
        VmafRsFrameScores s;
        for (int i = 0; i < FRAMES; i++) {
            fill(ref, i, 0);
            fill(dis, i, 1);
            VmafRsPicture r = pic(ref), ds[2] = {pic(dis), pic(ref)};
            CHECK(vmaf_rs_send(ctx, &r, &ds[0]) < 0, "a ladder refuses a plain send");
            CHECK(vmaf_rs_send_ladder(ctx, &r, ds, 1) < 0, "one picture for two renditions");
            CHECK(vmaf_rs_send_ladder(ctx, &r, NULL, 2) < 0, "NULL renditions");
            CHECK(vmaf_rs_send_ladder(ctx, &r, ds, 2) == 0, "send_ladder %d: %s", i, vmaf_rs_last_error(ctx));
        }
        CHECK(vmaf_rs_receive_rendition(ctx, 2, &s) < 0, "rendition 2 of 2");
        CHECK(vmaf_rs_receive_rendition(ctx, 0, NULL) < 0, "receive into NULL");
        CHECK(vmaf_rs_flush(ctx) == 0, "flush: %s", vmaf_rs_last_error(ctx));
        for (uint32_t r = 0; r < 2; r++) {
            int ret;
            while ((ret = vmaf_rs_receive_rendition(ctx, r, &s)) == 0) {
                CHECK(s.index == next[r], "rendition %u order", r);
                next[r]++;
                /* the reference against itself: ADM of identical pictures is within 1e-3 of 1 */
                for (uint32_t k = 0; r == 1 && k < s.count; k++)
                    if (!strcmp(s.names[k], "integer_adm2"))
                        CHECK(s.values[k] > 0.999, "reference vs itself: %s %f", s.names[k], s.values[k]);
            }
            CHECK(ret == VMAF_RS_EOF, "rendition %u ends with EOF, got %d", r, ret);
            CHECK(next[r] == FRAMES, "rendition %u: %llu frames", r, (unsigned long long)next[r]);
        }
    }
    CHECK(vmaf_rs_finish(ctx) == 0 && info_lines == 2, "one score line per rendition, got %d", info_lines);
    vmaf_rs_free(&ctx);

    /* lent host pictures (VMAF_RS_MEMORY_HOST_LENT, as the filter sends software frames): read
     * in place after the call, so some are still held when the sends are done; each released
     * exactly once, by the flush at the latest; scores equal to copied pictures' */
    {
        uint8_t *rs[FRAMES], *dsb[FRAMES];
        int counts[2 * FRAMES] = {0};
        double want[FRAMES], got[FRAMES];
        VmafRsContext *cc = NULL;
        CHECK(vmaf_rs_new(&ctx, log_cb, NULL) == 0 && vmaf_rs_new(&cc, log_cb, NULL) == 0, "new");
        CHECK(vmaf_rs_set_option(ctx, "n_threads", "2") == 0 && vmaf_rs_set_option(cc, "n_threads", "2") == 0,
              "n_threads");
        CHECK(vmaf_rs_configure(ctx, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0 &&
              vmaf_rs_configure(cc, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "configure: %s", vmaf_rs_last_error(ctx));
        released = 0;
        for (int i = 0; i < FRAMES; i++) {
            rs[i] = calloc(PITCH * H, 1);
            dsb[i] = calloc(PITCH * H, 1);
            fill(rs[i], i, 0);
            fill(dsb[i], i, 1);
            VmafRsPicture r = pic(rs[i]), d = pic(dsb[i]);
            CHECK(vmaf_rs_send(cc, &r, &d) == 0, "copied send %d: %s", i, vmaf_rs_last_error(cc));
            r.memory = d.memory = VMAF_RS_MEMORY_HOST_LENT;
            r.release = d.release = release_cb;
            r.release_opaque = &counts[2 * i];
            d.release_opaque = &counts[2 * i + 1];
            CHECK(vmaf_rs_send(ctx, &r, &d) == 0, "lent send %d: %s", i, vmaf_rs_last_error(ctx));
        }
        CHECK(released < 2 * FRAMES, "lent pictures are read in place: %d of %d released before the flush",
              released, 2 * FRAMES);
        CHECK(vmaf_rs_flush(ctx) == 0 && vmaf_rs_flush(cc) == 0, "flush");
        CHECK(released == 2 * FRAMES, "every lent picture released by the flush: %d of %d", released, 2 * FRAMES);
        for (int i = 0; i < 2 * FRAMES; i++)
            CHECK(counts[i] == 1, "picture %d released %d times", i, counts[i]);
        for (int k = 0; k < 2; k++) {
            VmafRsContext *c = k ? ctx : cc;
            double *out = k ? got : want;
            VmafRsFrameScores s;
            int n = 0;
            while (vmaf_rs_receive(c, &s) == 0 && n < FRAMES)
                out[n++] = s.values[s.count - 1];
            CHECK(n == FRAMES, "received %d of %d", n, FRAMES);
        }
        CHECK(!memcmp(want, got, sizeof(want)), "lent pictures score as copied ones");
        /* refused lent pictures (after the flush; of the wrong size) are released at once */
        int bad_counts[2] = {0, 0};
        VmafRsPicture lr = pic(rs[0]), ld = pic(dsb[0]);
        lr.memory = ld.memory = VMAF_RS_MEMORY_HOST_LENT;
        lr.release = ld.release = release_cb;
        lr.release_opaque = &bad_counts[0];
        ld.release_opaque = &bad_counts[1];
        CHECK(vmaf_rs_send(ctx, &lr, &ld) < 0, "lent send after flush fails");
        VmafRsContext *fresh = NULL;
        CHECK(vmaf_rs_new(&fresh, log_cb, NULL) == 0 &&
              vmaf_rs_configure(fresh, W, H, 8, VMAF_RS_LAYOUT_GRAY) == 0, "fresh context");
        ld.width = W - 1;
        CHECK(vmaf_rs_send(fresh, &lr, &ld) < 0, "lent pictures of another size fail");
        CHECK(strstr(vmaf_rs_last_error(fresh), "96x61") != NULL, "size named: %s", vmaf_rs_last_error(fresh));
        vmaf_rs_free(&fresh);
        CHECK(bad_counts[0] == 2 && bad_counts[1] == 2, "refused lent pictures released once each (%d, %d)",
              bad_counts[0], bad_counts[1]);
        vmaf_rs_free(&ctx);
        vmaf_rs_free(&cc);
        CHECK(released == 2 * FRAMES + 4, "nothing released twice at free");
        for (int i = 0; i < FRAMES; i++) {
            free(rs[i]);
            free(dsb[i]);
        }
    }

    free(ref);
    free(dis);
    free(small);
    if (failures) {
        fprintf(stderr, "capi_smoke: %d failures\n", failures);
        return 1;
    }
    printf("capi_smoke: all checks passed (%d frames)\n", FRAMES);
    return 0;
}
