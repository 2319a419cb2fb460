/*
 * The kernel's floor for downloads: a bare HTTP/1.1 server that answers every request with one
 * file through sendfile(2) (page cache to socket, no copy through user space). Bench only: it
 * shows what any server on this machine can reach next to `cat`, not something the service runs.
 * Usage: sendfile-server FILE; prints "LISTENING <port>".
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  struct stat st;
  if (stat(argv[1], &st) != 0) return 1;
  int server = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (bind(server, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(server, 64) != 0) return 1;
  getsockname(server, (struct sockaddr *)&addr, &len);
  printf("LISTENING %d\n", ntohs(addr.sin_port));
  fflush(stdout);
  for (;;) {
    int client = accept(server, NULL, NULL);
    if (client < 0) continue;
    char request[8192];
    size_t have = 0;
    ssize_t n;
    while ((n = read(client, request + have, sizeof request - 1 - have)) > 0) {
      have += (size_t)n;
      request[have] = 0;
      if (strstr(request, "\r\n\r\n")) break;
    }
    char head[256];
    int headLen = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: %lld\r\nconnection: close\r\n\r\n", (long long)st.st_size);
    int file = open(argv[1], O_RDONLY);
    if (file >= 0 && write(client, head, (size_t)headLen) == headLen) {
      off_t offset = 0;
      while (offset < st.st_size && sendfile(client, file, &offset, (size_t)(st.st_size - offset)) > 0) {
      }
    }
    if (file >= 0) close(file);
    close(client);
  }
}
