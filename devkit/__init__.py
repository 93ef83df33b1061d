"""Developer tooling, never shipped: the `idp` CLI, the local runtime on the embedded AWS
emulator, the client, synthetic documents, text metrics and the offline weights."""
