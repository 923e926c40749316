/*
 * cpuid-mask: runs a program as it would run on a CPU without AVX-512, on the same machine.
 *
 *   cpuid-mask [--check] PROGRAM [ARGS...]
 *
 * The benchmark's AVX2-only row (issue 13) needs libvmaf and vmaf_rs both on their AVX2 kernels,
 * and libvmaf offers FFmpeg no switch for that (its cpumask is not a filter option). Linux's CPUID
 * faulting (arch_prctl ARCH_SET_CPUID, /proc/cpuinfo flag cpuid_fault) makes every CPUID
 * instruction of a process trap; this launcher traces the program (ptrace, every thread and
 * child process), turns faulting on right after each exec, before the dynamic loader or the C
 * library ask, and answers each CPUID itself: the real values with the AVX-512 feature bits
 * cleared (leaf 7: F, DQ, IFMA, PF, ER, CD, BW, VL, VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ,
 * 4VNNIW, 4FMAPS, VP2INTERSECT, FP16, BF16). Software that checks CPUID before using AVX-512
 * (glibc, FFmpeg, libvmaf, Rust's is_x86_feature_detected) then takes its AVX2 paths. Only
 * CPUID is answered; other signals go to the program unchanged, but SIGSTOP (ignored) and a
 * process's SIGTRAP to itself (taken for the one after an exec). Programs ask CPUID at start-up
 * only, so the timing is the program's.
 *
 * --check runs nothing: exits 0 if CPUID faulting works here, else 1 with the reason.
 * Exit status: the program's (128 + signal if it was killed).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ARCH_SET_CPUID
#define ARCH_SET_CPUID 0x1012
#endif

/* The AVX-512 bits of CPUID leaf 7 (Intel SDM vol. 2A, CPUID; AMD APM vol. 3, same layout). */
static void clear_avx512(unsigned leaf, unsigned sub, unsigned r[4])
{
    if (leaf == 7 && sub == 0) {
        r[1] &= ~(1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 | 1u << 28 | 1u << 30 |
                  1u << 31);                                                   /* EBX */
        r[2] &= ~(1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 | 1u << 14);         /* ECX */
        r[3] &= ~(1u << 2 | 1u << 3 | 1u << 8 | 1u << 23);                     /* EDX */
    } else if (leaf == 7 && sub == 1) {
        r[0] &= ~(1u << 5);                                                    /* EAX: BF16 */
    }
}

/* In the stopped tracee `pid`, runs arch_prctl(ARCH_SET_CPUID, 0) from its current instruction
 * (patched to SYSCALL for one step, then restored). Returns the syscall's result. */
static long inject_cpuid_faulting(pid_t pid)
{
    struct user_regs_struct saved, regs;
    int status;

    if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0)
        return -errno;
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)saved.rip, 0);
    if (errno)
        return -errno;
    /* 0f 05 = SYSCALL, in the two low bytes (little-endian). */
    if (ptrace(PTRACE_POKETEXT, pid, (void *)saved.rip, (void *)((word & ~0xffffL) | 0x050f)) < 0)
        return -errno;
    regs = saved;
    regs.rax = SYS_arch_prctl;
    regs.rdi = ARCH_SET_CPUID;
    regs.rsi = 0;
    long ret = -EIO;
    if (ptrace(PTRACE_SETREGS, pid, 0, &regs) == 0 && ptrace(PTRACE_SINGLESTEP, pid, 0, 0) == 0 &&
        waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status) &&
        ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0)
        ret = (long)regs.rax;
    ptrace(PTRACE_POKETEXT, pid, (void *)saved.rip, (void *)word);
    ptrace(PTRACE_SETREGS, pid, 0, &saved);
    return ret;
}

/* Whether the SIGTRAP that stopped traced thread `t` is the one the kernel sends a traced
 * process after an execve: SI_USER "from" the process itself (the new program's thread is its
 * leader, so t is its pid), not a breakpoint (SI_KERNEL) or a raise() (SI_TKILL). Only a
 * process's kill(getpid(), SIGTRAP) looks the same, and then turning faulting on again is
 * harmless, though that signal is not delivered. */
static int exec_trap(pid_t t)
{
    siginfo_t si;
    return ptrace(PTRACE_GETSIGINFO, t, 0, &si) == 0 && si.si_code == SI_USER && si.si_pid == t;
}

/* Answers the CPUID that stopped thread `t` with SIGSEGV, if that is what it was. */
static int answer_cpuid(pid_t t)
{
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, t, 0, &regs) < 0)
        return 0;
    errno = 0;
    long ins = ptrace(PTRACE_PEEKTEXT, t, (void *)regs.rip, 0);
    if (errno || (ins & 0xffff) != 0xa20f) /* 0f a2 = CPUID */
        return 0;
    unsigned leaf = (unsigned)regs.rax, sub = (unsigned)regs.rcx, r[4];
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    clear_avx512(leaf, sub, r);
    regs.rax = r[0];
    regs.rbx = r[1];
    regs.rcx = r[2];
    regs.rdx = r[3];
    regs.rip += 2;
    return ptrace(PTRACE_SETREGS, t, 0, &regs) == 0;
}

int main(int argc, char **argv)
{
    int check = argc > 1 && !strcmp(argv[1], "--check");
    char *check_argv[] = {"true", NULL};
    char **prog = check ? check_argv : argv + 1;

    if (argc < 2) {
        fprintf(stderr, "usage: cpuid-mask [--check] PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("cpuid-mask: fork");
        return 1;
    }
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execvp(prog[0], prog);
        fprintf(stderr, "cpuid-mask: %s: %s\n", prog[0], strerror(errno));
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status))
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1; /* exec failed */
    /* No PTRACE_O_TRACEEXEC: a later execve then stops its thread with a plain SIGTRAP once
     * the call has returned (exec_trap), where the registers are the new program's own. */
    ptrace(PTRACE_SETOPTIONS, child, 0,
           PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK);
    long r = inject_cpuid_faulting(child);
    if (r != 0) {
        fprintf(stderr, "cpuid-mask: CPUID faulting is not available here (arch_prctl "
                "ARCH_SET_CPUID: %s); /proc/cpuinfo must list cpuid_fault\n", strerror((int)-r));
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        return 1;
    }
    ptrace(PTRACE_CONT, child, 0, 0);
    int result = 1;
    for (;;) {
        pid_t t = waitpid(-1, &status, __WALL);
        if (t < 0) {
            if (errno == EINTR)
                continue;
            break; /* ECHILD: every thread is gone */
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            if (t == child)
                result = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            continue;
        }
        if (!WIFSTOPPED(status))
            continue;
        int sig = WSTOPSIG(status);
        if (sig == SIGTRAP && !(status >> 16) && exec_trap(t)) {
            /* execve turned CPUID faulting off: on again for the new program, before it runs */
            if (inject_cpuid_faulting(t) != 0) {
                fprintf(stderr, "cpuid-mask: could not hide AVX-512 from a program exec'd by "
                        "the first; killing it\n");
                kill(t, SIGKILL);
                continue;
            }
            sig = 0;
        } else if (sig == SIGTRAP && status >> 16) /* clone/fork event: the new task is traced */
            sig = 0;
        else if (sig == SIGSTOP) /* a new thread's first stop (and any SIGSTOP: ignored) */
            sig = 0;
        else if (sig == SIGSEGV && answer_cpuid(t))
            sig = 0;
        ptrace(PTRACE_CONT, t, 0, (void *)(long)sig);
    }
    return result;
}
