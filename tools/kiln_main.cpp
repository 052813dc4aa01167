// The kiln command-line tool (placeholder until the verbs land).
#include <cstdio>
int main() { std::puts("kiln"); return 0; }
