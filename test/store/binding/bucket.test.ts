/** The bucket conformance cases (bucket.case.ts) in this process; test/runtime/workerd/store-binding.test.ts runs them inside workerd. */
import { CASES } from './bucket.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
