/*
 * The floor under the supervisor's exec cost (issue 41): what a seccomp
 * user notification round trip adds to an exec on this machine, with a
 * supervisor that decides nothing (it answers CONTINUE at once), in C.
 *
 *   cc -O2 -o /tmp/notify-floor scripts/seccomp-notify-floor.c -lpthread
 *   /tmp/notify-floor FILTER SYNC N
 *
 * Runs `bash -c 'for i in $(seq N); do /bin/true; done'` and prints the
 * time per exec. FILTER 0: no filter (the baseline); 1: every execve of
 * bash and its children goes to a supervisor thread (poll, then
 * SECCOMP_IOCTL_NOTIF_RECV and _SEND). SYNC 1 sets
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6+), which the runner did
 * until it measured it twice as slow here. With NOPOLL set in the
 * environment the thread blocks in SECCOMP_IOCTL_NOTIF_RECV instead of
 * poll first (it then never sees the hang-up: it is left blocked when the
 * loop ends, which this program does not wait for).
 * docs/src/performance-log.md has what it measured; compare medians of several
 * alternating runs, this machine is noisy.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif

static int listener = -1;

static void *serve(void *unused) {
  (void)unused;
  for (;;) {
    if (getenv("NOPOLL") == NULL) {
      struct pollfd p = {listener, POLLIN, 0};
      if (poll(&p, 1, -1) < 0) continue;
      if (!(p.revents & POLLIN)) return NULL; /* no process left */
    }
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) continue;
    struct seccomp_notif_resp r = {req.id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE};
    ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
  }
}

static void send_fd(int sock, int fd) {
  char b = 0, c[CMSG_SPACE(sizeof(int))];
  struct iovec io = {&b, 1};
  struct msghdr m = {0};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = c;
  m.msg_controllen = sizeof c;
  struct cmsghdr *h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &fd, sizeof fd);
  sendmsg(sock, &m, 0);
}

static int receive_fd(int sock) {
  char b, c[CMSG_SPACE(sizeof(int))];
  struct iovec io = {&b, 1};
  struct msghdr m = {0};
  int fd = -1;
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = c;
  m.msg_controllen = sizeof c;
  if (recvmsg(sock, &m, 0) == 1) memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
  return fd;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILTER(0|1) SYNC(0|1) N\n", argv[0]);
    return 2;
  }
  int filter = atoi(argv[1]), sync = atoi(argv[2]), n = atoi(argv[3]);
  int sv[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    if (filter) {
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      struct sock_filter f[] = {
          BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
          BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
          BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog prog = {4, f};
      int fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
      if (fd < 0) {
        perror("seccomp");
        _exit(1);
      }
      send_fd(sv[1], fd);
      close(fd);
    }
    char cmd[100];
    snprintf(cmd, sizeof cmd, "for i in $(seq %d); do /bin/true; done", n);
    execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(sv[1]);
  pthread_t th;
  if (filter) {
    listener = receive_fd(sv[0]);
    if (sync && ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, 1) != 0) perror("SET_FLAGS");
    pthread_create(&th, NULL, serve, NULL);
  }
  int st;
  waitpid(pid, &st, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("filter=%d sync=%d: %.1f ms, %.1f us/exec\n", filter, sync, ms, ms * 1000 / n);
  return 0;
}
