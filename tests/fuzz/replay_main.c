/* replay_main.c: main() for the harnesses without libFuzzer: each argument is a file, or a
 * folder whose files are all fed (sorted), one call each.  Exit 0 when every input ran
 * (a crash ends the process, which is the failure). */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tests/fuzz/fuzz.h"

static int feed(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) { fprintf(stderr, "replay: cannot open %s\n", path); return -1; }
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n, fp)) > 0) {
    n += r;
    if (n == cap) { unsigned char *nb = realloc(buf, cap *= 2); if (!nb) { free(buf); buf = NULL; } else buf = nb; }
  }
  fclose(fp);
  if (!buf) return -1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  int nfed = 0, bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) continue; /* an empty crash folder is not an error */
    if (!S_ISDIR(st.st_mode)) { bad |= feed(argv[i]) != 0; nfed++; continue; }
    DIR *d = opendir(argv[i]);
    if (!d) continue;
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
      if (de->d_name[0] == '.') continue;
      char **nv = realloc(names, (nn + 1) * sizeof *nv);
      if (!nv) break;
      names = nv;
      size_t l = strlen(argv[i]) + strlen(de->d_name) + 2;
      if (!(names[nn] = malloc(l))) break;
      snprintf(names[nn++], l, "%s/%s", argv[i], de->d_name);
    }
    closedir(d);
    qsort(names, nn, sizeof *names, cmp);
    for (size_t k = 0; k < nn; k++) {
      struct stat s2;
      if (stat(names[k], &s2) == 0 && S_ISREG(s2.st_mode)) { bad |= feed(names[k]) != 0; nfed++; }
      free(names[k]);
    }
    free(names);
  }
  printf("%d inputs replayed\n", nfed);
  return bad;
}
