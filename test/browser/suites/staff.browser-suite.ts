import { runBrowserSuite } from '../run-suite';

runBrowserSuite('staff');
