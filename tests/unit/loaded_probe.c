/* A shared object that test_loaded opens, to see a load after a miss. */
int a2a_loaded_probe(void) { return 42; }
