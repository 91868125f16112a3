import { runBrowserSuite } from '../run-suite';

runBrowserSuite('pages');
