import { runArea } from './run-area';

runArea('stores');
