import { runBrowserSuite } from '../run-suite';

runBrowserSuite('lists');
