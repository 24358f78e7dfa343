/** The cases of range.case.ts in this process; test/runtime/workerd/store-binding.test.ts runs them inside workerd. */
import { CASES } from './range.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
