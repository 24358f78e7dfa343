/** The cases of put-delete.case.ts in this process; test/runtime/workerd/store-binding.test.ts runs them inside workerd. */
import { CASES } from './put-delete.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
