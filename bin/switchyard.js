#!/usr/bin/env node
// The `switchyard` command: runs the compiled CLI (npm run build produces dist/).
import '../dist/src/cli/main.js';
