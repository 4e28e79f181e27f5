/* ci/reach_rt.c - the runtime of the reach map's build (ci/reach.sh).
 *
 * That build compiles every file with gcc's -finstrument-functions: each
 * function's entry, an inlined one's included, calls __cyg_profile_func_enter
 * with the function's address. This file, linked into every executable of
 * that build only, keeps the set of those addresses (a lock-free open
 * addressing table: the cpu kernels call from many threads) and at exit
 * appends them as "MODULE OFFSET" lines (OFFSET relative to the module's
 * load address, as llvm-symbolizer takes it for PIE and shared objects) to
 * $XO_REACH_DIR/PID.pcs. Without XO_REACH_DIR nothing is written. The table
 * is a shared mapping, so a forked child's functions land in its parent's
 * table as well: the sandboxed HDF5 reader (model/h5read.c) runs under
 * RLIMIT_FSIZE 0 and RLIMIT_NOFILE 0, may not write a file of its own (a
 * write would kill it with SIGXFSZ: a process under a file size limit
 * writes nothing) and its parent writes for it. _exit is defined here too
 * (the executable's own definition wins over libc's), so a child that ends
 * with it and may write (a test's crash hook) writes its set first.
 *
 * A process killed by a signal runs no exit code, and one that calls execve
 * loses its memory: so each function a process enters for the first time
 * is also appended to the file at once (one line, one write on an O_APPEND
 * descriptor: whole lines), where a kill or an exec cannot take it back. A
 * process under a file size limit does not write then either (its parent
 * writes the shared table at its exit). Lines may repeat; the reader takes
 * them as a set.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REACH_SLOTS (1u << 16) /* the product has a few thousand functions */

static uintptr_t *reach_table; /* REACH_SLOTS entries, MAP_SHARED */

#define NOINST __attribute__((no_instrument_function))

void __cyg_profile_func_enter(void *fn, void *site) NOINST;
void __cyg_profile_func_exit(void *fn, void *site) NOINST;
static NOINST void reach_note(uintptr_t pc);

void __cyg_profile_func_enter(void *fn, void *site)
{
    uintptr_t key = (uintptr_t)fn;
    uintptr_t *tab = __atomic_load_n(&reach_table, __ATOMIC_ACQUIRE);
    (void)site;
    if (!tab) {
        void *m = mmap(NULL, REACH_SLOTS * sizeof *tab, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        uintptr_t *none = NULL;
        if (m == MAP_FAILED)
            return;
        tab = m;
        if (!__atomic_compare_exchange_n(&reach_table, &none, tab, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            munmap(m, REACH_SLOTS * sizeof *tab);
            tab = none;
        }
    }
    for (uint32_t i = (uint32_t)((key >> 4) * 2654435761u) % REACH_SLOTS, n = 0; n < REACH_SLOTS;
         i = (i + 1) % REACH_SLOTS, n++) {
        uintptr_t v = __atomic_load_n(&tab[i], __ATOMIC_RELAXED);
        if (v == key)
            return;
        if (v == 0) {
            uintptr_t zero = 0;
            if (__atomic_compare_exchange_n(&tab[i], &zero, key, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                reach_note(key);
                return;
            }
            if (zero == key)
                return;
        }
    }
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

struct reach_find {
    uintptr_t pc;
    uintptr_t base;
    const char *name;
};

static NOINST int reach_module(struct dl_phdr_info *info, size_t size, void *data)
{
    struct reach_find *f = data;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && f->pc >= lo && f->pc < lo + ph->p_memsz) {
            f->base = info->dlpi_addr;
            f->name = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

/* reach_line: "MODULE OFFSET\n" of pc into line (size n); 0 when pc is in
 * no loaded module or the line does not fit. */
static NOINST int reach_line(uintptr_t pc, char *line, size_t n)
{
    static char exe[4096];
    struct reach_find f = {pc, 0, NULL};
    if (!exe[0]) {
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = '\0';
    }
    if (!dl_iterate_phdr(reach_module, &f))
        return 0;
    const char *mod = (f.name && *f.name) ? f.name : exe;
    int k = snprintf(line, n, "%s %lx\n", mod, (unsigned long)(f.pc - f.base));
    return k > 0 && (size_t)k < n ? k : 0;
}

/* reach_file: the descriptor of $XO_REACH_DIR/PID.pcs (-1: none), opened
 * once (a forked child appends to its parent's file: the same test's). */
static int reach_fd = -1;

static NOINST int reach_file(void)
{
    const char *dir = getenv("XO_REACH_DIR");
    char path[4096];
    struct rlimit fs;
    int fd = __atomic_load_n(&reach_fd, __ATOMIC_ACQUIRE), none = -1;
    if (!dir || !*dir)
        return -1;
    if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY)
        return -1;
    if (fd >= 0)
        return fd;
    snprintf(path, sizeof path, "%s/%ld.pcs", dir, (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (!__atomic_compare_exchange_n(&reach_fd, &none, fd, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        close(fd); /* another thread opened it first */
        fd = none;
    }
    return fd;
}

static NOINST void reach_note(uintptr_t pc)
{
    char line[4200];
    int fd = reach_file(), n;
    if (fd >= 0 && (n = reach_line(pc, line, sizeof line)) > 0)
        (void)!write(fd, line, (size_t)n);
}

static NOINST void reach_flush(void)
{
    const char *dir = getenv("XO_REACH_DIR");
    char path[4096], exe[4096], line[4200];
    struct rlimit fs;
    uintptr_t *tab = __atomic_load_n(&reach_table, __ATOMIC_ACQUIRE);
    if (!dir || !*dir || !tab)
        return;
    if (getrlimit(RLIMIT_FSIZE, &fs) == 0 && fs.rlim_cur != RLIM_INFINITY)
        return;
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    snprintf(path, sizeof path, "%s/%ld.pcs", dir, (long)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    for (size_t i = 0; i < REACH_SLOTS; i++) {
        struct reach_find f = {__atomic_load_n(&tab[i], __ATOMIC_RELAXED), 0, NULL};
        if (!f.pc || !dl_iterate_phdr(reach_module, &f))
            continue;
        const char *mod = (f.name && *f.name) ? f.name : exe;
        int n = snprintf(line, sizeof line, "%s %lx\n", mod, (unsigned long)(f.pc - f.base));
        if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) != n)
            break;
    }
    close(fd);
}

NOINST void _exit(int status)
{
    reach_flush();
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

__attribute__((destructor)) static NOINST void reach_at_exit(void)
{
    reach_flush();
}
