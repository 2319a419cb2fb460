/*
 * The follower bench's load client: SSE `stream_task` followers on raw sockets, all driven by one
 * epoll loop. A Node client parsing 10,000 chunked streams took most of a core of this 2-core
 * machine and added its own event-loop delay to every latency it measured; this one costs a few
 * percent of a core, so the figures are the server's. Bench only.
 *
 * Usage: sse-follow-client PORT TOKEN PER_TASK WINDOW_MS OPEN_LIMIT_MS CONCURRENCY SOURCES TASK_ID...
 * Opens PER_TASK followers of each Task (`POST /jobs/stream_task/events`), CONCURRENCY at a time
 * (a burst of thousands overflows the listen backlog), bound to SOURCES loopback addresses (15,000
 * connections, run after run, exhaust one address's ephemeral ports). Prints "STEADY" once every
 * follower got its response head (or OPEN_LIMIT_MS passed), measures WINDOW_MS, closes them all
 * and prints one JSON line: counts, and log line -> follower delay p50 / p99 / max in ms over the
 * lines stamped inside the window. The delay runs from the timestamp the Task's logger wrote into
 * the line (ISO, ms: so up to 1 ms too long) to the read that brought it (CLOCK_REALTIME).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { SIZE_LINE, CHUNK_DATA, CHUNK_END, PLAIN };

struct follower {
  int fd;
  int task;
  int headed, finished, sent;
  int body;         /* SIZE_LINE / CHUNK_DATA / CHUNK_END while chunked, else PLAIN */
  long left;        /* bytes of the chunk still to come, or the size being parsed */
  int in_extension; /* after ';' on a chunk size line */
  char *text;       /* head, then payload text not yet closed by a blank line */
  size_t len, cap;
};

static struct {
  long lines, results, errors, opened;
  int64_t *delays; /* microseconds */
  size_t timed, cap;
} stats;

static int64_t steady_from = INT64_MAX, steady_until = INT64_MAX; /* ms since epoch */
static int64_t now_us;

static int64_t realtime_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int digits(const char *p, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    v = v * 10 + (p[i] - '0');
  }
  return v;
}

/* Milliseconds since epoch of "YYYY-MM-DDTHH:MM:SS.mmmZ " at p, or -1 when p holds no such stamp. */
static int64_t stamp_ms(const char *p, const char *end) {
  if (end - p < 25 || p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':' || p[19] != '.' || p[23] != 'Z' || p[24] != ' ') return -1;
  int y = digits(p, 4), mo = digits(p + 5, 2), d = digits(p + 8, 2), h = digits(p + 11, 2), mi = digits(p + 14, 2), s = digits(p + 17, 2), ms = digits(p + 20, 3);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || mi < 0 || s < 0 || ms < 0) return -1;
  /* Days from civil (H. Hinnant's algorithm): no timegm, no time zone. */
  y -= mo <= 2;
  int64_t era = y / 400, yoe = y - era * 400, doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  return ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)s * 1000 + ms;
}

static void record(int64_t written_ms) {
  stats.lines++;
  if (written_ms < steady_from || written_ms >= steady_until) return;
  if (stats.timed == stats.cap) {
    stats.cap = stats.cap ? stats.cap * 2 : 1 << 16;
    stats.delays = realloc(stats.delays, stats.cap * sizeof *stats.delays);
    if (!stats.delays) exit(1);
  }
  stats.delays[stats.timed++] = now_us - written_ms * 1000;
}

/* One SSE block (without its blank line): a log event's lines start its content or follow an escaped newline. */
static void block(struct follower *f, const char *p, size_t n) {
  const char *end = p + n;
  if (n >= 13 && memcmp(p, "event: result", 13) == 0) {
    stats.results++;
    f->finished = 1;
    return;
  }
  if (n < 10 || memcmp(p, "event: log", 10) != 0) return;
  for (const char *q = p; q < end; q++) {
    int64_t at = -1;
    if (*q == '"' && end - q >= 11 && memcmp(q, "\"content\":\"", 11) == 0) at = stamp_ms(q + 11, end);
    else if (*q == '\\' && q + 1 < end && q[1] == 'n') at = stamp_ms(q + 2, end);
    if (at >= 0) record(at);
  }
}

static void append(struct follower *f, const char *p, size_t n) {
  if (f->len + n > f->cap) {
    f->cap = (f->len + n) * 2;
    f->text = realloc(f->text, f->cap);
    if (!f->text) exit(1);
  }
  memcpy(f->text + f->len, p, n);
  f->len += n;
}

/* Payload text: complete blocks are handled, the rest waits for more. */
static void payload(struct follower *f, const char *p, size_t n) {
  append(f, p, n);
  size_t start = 0;
  for (size_t i = 1; i < f->len; i++) {
    if (f->text[i] != '\n' || f->text[i - 1] != '\n') continue;
    block(f, f->text + start, i - 1 - start);
    start = i + 1;
  }
  memmove(f->text, f->text + start, f->len - start);
  f->len -= start;
}

/* Response body bytes, chunked or not. The CRLF that closes a chunk may come only with the next one. */
static void body(struct follower *f, const char *p, size_t n) {
  if (f->body == PLAIN) return payload(f, p, n);
  const char *end = p + n;
  while (p < end) {
    if (f->body == CHUNK_DATA) {
      size_t take = (size_t)(end - p) < (size_t)f->left ? (size_t)(end - p) : (size_t)f->left;
      payload(f, p, take); /* handed on as it comes, without waiting for the rest of its chunk */
      p += take;
      if ((f->left -= (long)take) == 0) f->body = CHUNK_END;
      continue;
    }
    char c = *p++;
    if (f->body == CHUNK_END) {
      if (c == '\n') f->body = SIZE_LINE, f->left = 0, f->in_extension = 0;
    } else if (c == '\n') {
      if (f->left == 0) return; /* the last chunk: the server ends the stream */
      f->body = CHUNK_DATA;
    } else if (c == ';') f->in_extension = 1;
    else if (!f->in_extension && c != '\r') {
      int v = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
      if (v < 0) return;
      f->left = f->left * 16 + v;
    }
  }
}

/* Head bytes until the blank line; 1 once the head is complete (a 200), -1 for any other status. */
static int head(struct follower *f, const char **p, size_t *n) {
  size_t had = f->len;
  append(f, *p, *n);
  char *eoh = memmem(f->text, f->len, "\r\n\r\n", 4);
  if (!eoh) return 0;
  *eoh = 0;
  if (strncmp(f->text, "HTTP/1.1 200", 12) != 0) return -1;
  f->body = strcasestr(f->text, "\r\ntransfer-encoding: chunked") ? SIZE_LINE : PLAIN;
  size_t used = (size_t)(eoh + 4 - f->text) - had;
  *p += used;
  *n -= used;
  f->len = 0;
  f->headed = 1;
  return 1;
}

static struct follower *followers;
static int total, per_task, in_flight, next_open, stopped, epoll_fd, port, sources, concurrency;
static double window_cpu; /* CPU seconds of this client when the window started */
static char **task_ids;
static const char *token;

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void steady(void) {
  if (steady_from != INT64_MAX) return;
  steady_from = realtime_us() / 1000;
  window_cpu = cpu_seconds();
  stats.opened = 0;
  for (int i = 0; i < total; i++) stats.opened += followers[i].headed;
  printf("STEADY\n");
  fflush(stdout);
}

static void open_more(void);

/* A follower that got its head, or gave up before it, frees a slot for the next. */
static void settled(void) {
  in_flight--;
  open_more();
  if (in_flight == 0 && next_open == total) steady();
}

static void finish(struct follower *f) {
  if (f->fd < 0) return;
  close(f->fd);
  f->fd = -1;
  if (!f->finished && !stopped) stats.errors++;
  if (!f->headed) settled();
}

static void send_request(struct follower *f) {
  char body[512], request[2048];
  int blen = snprintf(body, sizeof body, "{\"arguments\":{\"task_id\":\"%s\"}}", task_ids[f->task]);
  int n = snprintf(request, sizeof request,
                   "POST /jobs/stream_task/events HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer %s\r\ncontent-type: application/json\r\n"
                   "connection: close\r\ncontent-length: %d\r\n\r\n%s",
                   token, blen, body);
  f->sent = 1;
  if (write(f->fd, request, (size_t)n) != n) finish(f);
}

static void open_one(int i) {
  struct follower *f = &followers[i];
  f->task = i / per_task;
  f->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  in_flight++;
  if (f->fd < 0) return (void)(stats.errors++, f->fd = -1, settled());
  int one = 1;
  setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (sources > 0) {
    int k = i % sources;
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = htonl((127u << 24) | ((unsigned)(k / 250) << 8) | (unsigned)(2 + k % 250))};
#ifdef IP_BIND_ADDRESS_NO_PORT
    setsockopt(f->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
#endif
    bind(f->fd, (struct sockaddr *)&local, sizeof local);
  }
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP, .data.u32 = (uint32_t)i};
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, f->fd, &ev);
  if (connect(f->fd, (struct sockaddr *)&addr, sizeof addr) == 0) send_request(f);
  else if (errno != EINPROGRESS) finish(f);
}

static void open_more(void) {
  while (!stopped && next_open < total && in_flight < concurrency) open_one(next_open++);
}

static void readable(struct follower *f) {
  static char buf[1 << 16];
  for (;;) {
    ssize_t n = read(f->fd, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return finish(f);
    if (n < 0) return;
    now_us = realtime_us();
    const char *p = buf;
    size_t left = (size_t)n;
    if (!f->headed) {
      int h = head(f, &p, &left);
      if (h < 0) return finish(f);
      if (h == 0) continue;
      settled();
    }
    body(f, p, left);
    if (f->finished) return finish(f);
  }
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static double pct(double p) {
  if (!stats.timed) return -1;
  size_t i = (size_t)(p / 100 * (double)stats.timed);
  return (double)stats.delays[i < stats.timed ? i : stats.timed - 1] / 1000;
}

int main(int argc, char **argv) {
  if (argc < 9) {
    fprintf(stderr, "usage: sse-follow-client PORT TOKEN PER_TASK WINDOW_MS OPEN_LIMIT_MS CONCURRENCY SOURCES TASK_ID...\n");
    return 2;
  }
  port = atoi(argv[1]);
  token = argv[2];
  per_task = atoi(argv[3]);
  int64_t window_ms = atoll(argv[4]), open_limit_ms = atoll(argv[5]);
  concurrency = atoi(argv[6]);
  sources = atoi(argv[7]);
  task_ids = argv + 8;
  total = per_task * (argc - 8);
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  followers = calloc((size_t)total, sizeof *followers);
  epoll_fd = epoll_create1(0);
  int64_t started = realtime_us() / 1000;
  open_more();
  static struct epoll_event events[1024];
  for (;;) {
    int64_t now = realtime_us() / 1000;
    if (steady_from == INT64_MAX && now - started >= open_limit_ms) steady();
    if (steady_from != INT64_MAX && now - steady_from >= window_ms) break;
    int64_t until = steady_from == INT64_MAX ? started + open_limit_ms : steady_from + window_ms;
    int n = epoll_wait(epoll_fd, events, 1024, (int)(until - now));
    for (int k = 0; k < n; k++) {
      struct follower *f = &followers[events[k].data.u32];
      if (f->fd < 0) continue;
      if ((events[k].events & EPOLLOUT) && !f->sent) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) {
          finish(f);
          continue;
        }
        send_request(f);
      }
      if (f->fd >= 0 && (events[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) readable(f);
    }
  }
  steady_until = realtime_us() / 1000;
  stopped = 1;
  for (int i = 0; i < total; i++) finish(&followers[i]);
  qsort(stats.delays, stats.timed, sizeof *stats.delays, cmp);
  double cpu = cpu_seconds() - window_cpu;
  printf("{\"opened\":%ld,\"lines\":%ld,\"timed\":%zu,\"results\":%ld,\"errors\":%ld,\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f,\"window_cpu_s\":%.2f}\n", stats.opened, stats.lines,
         stats.timed, stats.results, stats.errors, pct(50), pct(99), pct(100), cpu);
  return 0;
}
