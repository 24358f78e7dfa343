/** The cases of ssec.case.ts in this process; test/runtime/workerd/store-binding.test.ts runs them inside workerd. */
import { CASES } from './ssec.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
