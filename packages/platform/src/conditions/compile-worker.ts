/** The condition pool's worker module (see compiler.ts): compiles large conditions to SQL on a kernel worker thread. */
import { compileConditions } from './compiler.js';

export const ops = { compile: compileConditions };
