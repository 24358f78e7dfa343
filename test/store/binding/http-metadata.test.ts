/** The cases of http-metadata.case.ts in this process; test/runtime/workerd/store-binding.test.ts runs them inside workerd. */
import { CASES } from './http-metadata.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
