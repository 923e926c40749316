/*
 * Leak reducer for the vmaf_rs filter's CUDA path, linked against the patched static FFmpeg
 * libraries (build/ffmpeg/lib/lib*.a, built by scripts/ffmpeg-build.sh). libcuda is NOT linked: it is
 * dlopen()ed (as FFmpeg itself does) for cuMemGetInfo.
 *
 * Each cycle: create a CUDA device context; build a graph whose two inputs are CUDA frames
 * (testsrc2 -> format=nv12 -> hwupload with that device as every filter's hw_device_ctx; the
 * distorted one is noised) -> vmaf_rs -> buffersink; pull every frame (FRAMES per input) until
 * EOF; free the graph and the device. Then print the GPU's free memory (cuMemGetInfo, in the
 * device's primary context, which is a different context from FFmpeg's and lives for the whole
 * run), the resident set size (/proc/self/statm) and the malloc heap in use (mallinfo2, all
 * arenas), both after malloc_trim(0) so that memory freed but kept by the allocator's per-thread
 * arenas does not count as growth.
 *
 * Exit status: 0 if, after WARMUP cycles, the GPU's free memory never changed (to the byte) and
 * neither RSS nor the heap in use grew by more than 1 MiB; 1 otherwise; 2 on errors. With
 * CYCLES <= WARMUP nothing is checked (for short runs under compute-sanitizer).
 *
 *   [VMAF_RS_REDUCER_OPTS=filter options] cuda_reducer [CYCLES=100] [FRAMES=10] [WIDTH=3840] [HEIGHT=2160] [WARMUP=5] [MODE=graph]
 *
 * MODE=device only creates and frees the CUDA device each cycle (a control: what the driver and
 * FFmpeg's CUDA device cost without vmaf_rs).
 *
 * Built by scripts/gpu-check.sh --stage:
 *   gcc -O2 -o build/gpu/cuda_reducer tests/cuda_reducer.c -Ibuild/ffmpeg/include \
 *       $(PKG_CONFIG_PATH=build/ffmpeg/lib/pkgconfig pkg-config --static --libs libavfilter) -ldl
 */

#include <dlfcn.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>

/* The few driver API entry points we need (ABI-stable since CUDA 3.2). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease)(CUdevice);
static CUresult (*p_cuCtxPushCurrent)(CUcontext);
static CUresult (*p_cuCtxPopCurrent)(CUcontext *);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);

static CUdevice cu_dev;
static CUcontext cu_query_ctx;

static int load_cuda(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cuda_reducer: cannot load libcuda: %s\n", dlerror());
        return -1;
    }
#define LOAD(sym, name)                                                   \
    if (!(*(void **)&p_##sym = dlsym(h, name))) {                         \
        fprintf(stderr, "cuda_reducer: libcuda lacks %s\n", name);        \
        return -1;                                                        \
    }
    LOAD(cuInit, "cuInit");
    LOAD(cuDeviceGet, "cuDeviceGet");
    LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    LOAD(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    LOAD(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    LOAD(cuMemGetInfo, "cuMemGetInfo_v2");
#undef LOAD
    if (p_cuInit(0) || p_cuDeviceGet(&cu_dev, 0) ||
        p_cuDevicePrimaryCtxRetain(&cu_query_ctx, cu_dev)) {
        fprintf(stderr, "cuda_reducer: cuInit/cuDeviceGet/cuDevicePrimaryCtxRetain failed\n");
        return -1;
    }
    return 0;
}

static size_t gpu_free(void)
{
    size_t free_b = 0, total = 0;
    CUcontext dummy;
    if (p_cuCtxPushCurrent(cu_query_ctx) == 0) {
        p_cuMemGetInfo(&free_b, &total);
        p_cuCtxPopCurrent(&dummy);
    }
    return free_b;
}

/* Heap bytes in use in every malloc arena (small and mmapped chunks). */
static long heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One cycle; returns the number of frames that came out, or a negative AVERROR. */
static int cycle(int frames, int w, int h, int device_only, double *vmaf_last)
{
    AVBufferRef *dev = NULL;
    AVFilterGraph *graph = NULL;
    AVFilterContext *sink;
    AVFrame *frame = NULL;
    AVFilterGraphSegment *seg = NULL;
    AVFilterInOut *ins = NULL, *outs = NULL;
    char desc[2048];
    /* VMAF_RS_REDUCER_OPTS: the filter's options (e.g. a v1 model + psnr + float_ssim; the
     * model must be named vmaf, whose metadata each cycle checks). */
    const char *opts = getenv("VMAF_RS_REDUCER_OPTS") ? getenv("VMAF_RS_REDUCER_OPTS") : "";
    int ret, n = 0;

    ret = av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_CUDA, NULL, NULL, 0);
    if (ret < 0) {
        fprintf(stderr, "cuda_reducer: av_hwdevice_ctx_create: %s\n", av_err2str(ret));
        return ret;
    }
    if (device_only) {
        av_buffer_unref(&dev);
        *vmaf_last = 0;
        return frames;
    }
    graph = avfilter_graph_alloc();
    frame = av_frame_alloc();
    if (!graph || !frame) {
        ret = AVERROR(ENOMEM);
        goto end;
    }
    snprintf(desc, sizeof(desc),
             "testsrc2=s=%dx%d:r=25,trim=end_frame=%d,format=nv12,hwupload[ref];"
             "testsrc2=s=%dx%d:r=25,trim=end_frame=%d,noise=c0s=12:c0f=t,format=nv12,hwupload[dis];"
             "[dis][ref]vmaf_rs%s%s,buffersink@sink",
             w, h, frames, w, h, frames, opts[0] ? "=" : "", opts);
    /* hwupload needs its device at init: create the filters, give each the device, then init. */
    ret = avfilter_graph_segment_parse(graph, desc, 0, &seg);
    if (ret >= 0)
        ret = avfilter_graph_segment_create_filters(seg, 0);
    if (ret < 0) {
        fprintf(stderr, "cuda_reducer: parse '%s': %s\n", desc, av_err2str(ret));
        goto end;
    }
    for (unsigned i = 0; i < graph->nb_filters; i++) {
        graph->filters[i]->hw_device_ctx = av_buffer_ref(dev);
        if (!graph->filters[i]->hw_device_ctx) {
            ret = AVERROR(ENOMEM);
            goto end;
        }
    }
    ret = avfilter_graph_segment_apply(seg, 0, &ins, &outs);
    if (ret >= 0 && (ins || outs))
        ret = AVERROR(EINVAL);  /* every pad must be linked */
    if (ret < 0) {
        fprintf(stderr, "cuda_reducer: graph '%s': %s\n", desc, av_err2str(ret));
        goto end;
    }
    ret = avfilter_graph_config(graph, NULL);
    if (ret < 0) {
        fprintf(stderr, "cuda_reducer: avfilter_graph_config: %s\n", av_err2str(ret));
        goto end;
    }
    sink = avfilter_graph_get_filter(graph, "buffersink@sink");
    if (!sink) {
        ret = AVERROR_BUG;
        goto end;
    }
    for (;;) {
        AVDictionaryEntry *e;
        ret = av_buffersink_get_frame(sink, frame);
        if (ret == AVERROR_EOF) {
            ret = 0;
            break;
        }
        if (ret < 0) {
            fprintf(stderr, "cuda_reducer: av_buffersink_get_frame: %s\n", av_err2str(ret));
            goto end;
        }
        if (frame->format != AV_PIX_FMT_CUDA) {
            fprintf(stderr, "cuda_reducer: output frame is not a CUDA frame\n");
            ret = AVERROR_BUG;
            goto end;
        }
        e = av_dict_get(frame->metadata, "lavfi.vmaf_rs.vmaf", NULL, 0);
        if (e)
            *vmaf_last = atof(e->value);
        n++;
        av_frame_unref(frame);
    }
end:
    avfilter_inout_free(&ins);
    avfilter_inout_free(&outs);
    avfilter_graph_segment_free(&seg);
    av_frame_free(&frame);
    avfilter_graph_free(&graph);
    av_buffer_unref(&dev);
    return ret < 0 ? ret : n;
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 100;
    int frames = argc > 2 ? atoi(argv[2]) : 10;
    int w      = argc > 3 ? atoi(argv[3]) : 3840;
    int h      = argc > 4 ? atoi(argv[4]) : 2160;
    int warmup = argc > 5 ? atoi(argv[5]) : 5;
    int device_only = argc > 6 && !strcmp(argv[6], "device");
    size_t free0 = 0;
    long rss0 = 0, heap0 = 0, rss_max = 0, heap_max = 0, rss = 0, heap = 0;
    long long gpu_max_delta = 0;
    int bad_gpu = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    av_log_set_level(AV_LOG_ERROR);
    if (cycles < 1 || frames < 1 || w < 16 || h < 16 || warmup < 1 ||
        (argc > 6 && !device_only && strcmp(argv[6], "graph"))) {
        fprintf(stderr, "usage: %s [CYCLES] [FRAMES] [WIDTH] [HEIGHT] [WARMUP] [graph|device]\n", argv[0]);
        return 2;
    }
    if (load_cuda() < 0)
        return 2;

    if (device_only)
        printf("cuda_reducer: %d cycles of CUDA device create/free only (control), warm-up %d\n",
               cycles, warmup);
    else
        printf("cuda_reducer: %d cycles x %d frames at %dx%d (nv12, hwupload -> vmaf_rs), warm-up %d\n",
               cycles, frames, w, h, warmup);
    printf("%6s %7s %9s %8s %16s %12s %10s %10s\n", "cycle", "frames", "vmaf", "fps",
           "gpu_free_bytes", "gpu_delta", "rss_kib", "heap_kib");
    for (int c = 0; c < cycles; c++) {
        double vmaf = -1, t0 = now(), dt;
        int n = cycle(frames, w, h, device_only, &vmaf);
        size_t fr;
        long long delta;

        dt = now() - t0;
        if (n < 0)
            return 2;
        if (n != frames) {
            fprintf(stderr, "cuda_reducer: cycle %d gave %d frames, expected %d\n", c, n, frames);
            return 2;
        }
        if (vmaf < 0) {
            fprintf(stderr, "cuda_reducer: cycle %d: no lavfi.vmaf_rs.vmaf metadata\n", c);
            return 2;
        }
        fr = gpu_free();
        malloc_trim(0);
        rss  = rss_bytes();
        heap = heap_bytes();
        if (c == warmup - 1) {
            free0 = fr;
            rss0  = rss;
            heap0 = heap;
        }
        delta = c >= warmup - 1 ? (long long)fr - (long long)free0 : 0;
        printf("%6d %7d %9.4f %8.1f %16zu %12lld %10ld %10ld\n", c, n, vmaf, n / dt, fr, delta,
               rss / 1024, heap / 1024);
        if (c >= warmup) {
            if (delta != 0)
                bad_gpu = 1;
            if (llabs(delta) > llabs(gpu_max_delta))
                gpu_max_delta = delta;
            if (rss - rss0 > rss_max)
                rss_max = rss - rss0;
            if (heap - heap0 > heap_max)
                heap_max = heap - heap0;
        }
    }
    p_cuDevicePrimaryCtxRelease(cu_dev);

    if (cycles <= warmup) {
        printf("cuda_reducer: %d cycles, no check (warm-up %d)\n", cycles, warmup);
        return 0;
    }
    printf("cuda_reducer: over %d cycles after the warm-up (%d): GPU free memory changed by %lld "
           "bytes at most (%s); RSS grew by %ld bytes (max %ld), heap in use by %ld bytes (max %ld); "
           "limit 1048576\n", cycles - warmup, warmup, gpu_max_delta,
           bad_gpu ? "LEAK" : "unchanged", rss - rss0, rss_max, heap - heap0, heap_max);
    if (bad_gpu || rss_max > 1048576 || heap_max > 1048576) {
        printf("cuda_reducer: FAIL\n");
        return 1;
    }
    printf("cuda_reducer: PASS\n");
    return 0;
}
