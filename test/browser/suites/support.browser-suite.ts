import { runBrowserSuite } from '../run-suite';

runBrowserSuite('support');
