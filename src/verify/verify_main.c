/*
 * verify_main.c: build/verify-bundle (placeholder until src/verify lands).
 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--version")) {
        printf("verify-bundle %s\n", EV_VERSION);
        return 0;
    }
    fprintf(stderr, "verify-bundle: not built yet in this version\n");
    return 2;
}
