/** How engine failures reach scripts (binding-errors.case.ts), in this process; test/runtime/workerd/store-binding.test.ts runs the cases inside workerd. */
import { CASES } from './binding-errors.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
