/** onlyIf (conditional.case.ts) in this process; test/runtime/workerd/store-binding.test.ts runs the cases inside workerd. */
import { CASES } from './conditional.case.ts';
import { runCasesInProcess } from './in-process.ts';

runCasesInProcess(CASES);
